"""Choosing the reader's language: ?lang= first, then the cookie, then Accept-Language."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.i18n import LANGUAGES, negotiate, normalize


def test_query_beats_cookie_beats_header() -> None:
    """The first choice with a catalog wins; the header is the last resort."""
    assert negotiate("de", "it", accept_language="es") == "de"
    assert negotiate(None, "it", accept_language="es") == "it"
    assert negotiate("xx", None, accept_language="es") == "es"


def test_header_quality_values_rank_languages() -> None:
    """Accept-Language is read by q value, then by order; unknown languages are skipped."""
    assert negotiate(accept_language="fr-CH, fr;q=0.9, sk;q=0.8, de;q=0.7") == "sk"
    assert negotiate(accept_language="en;q=0.5, zh-CN;q=0.9") == "zh"
    assert negotiate(accept_language="it, es") == "it"
    assert negotiate(accept_language="de;q=0, es;q=0.1") == "es"


def test_unknown_or_missing_falls_back_to_english() -> None:
    """No usable choice gives English."""
    assert negotiate(None, None, accept_language=None) == "en"
    assert negotiate(accept_language="fr, ja") == "en"


def test_region_and_script_tags_map_to_the_language() -> None:
    """de-AT, zh-Hans-CN and pt_BR-like tags are reduced to their language."""
    assert normalize("de-AT") == "de"
    assert normalize("zh-Hans-CN") == "zh"
    assert normalize("SK_sk") == "sk"
    assert normalize("pt-BR") is None


@given(st.text(max_size=200))
def test_any_header_gives_a_language_with_a_catalog(header: str) -> None:
    """A malformed header never raises and always yields one of the languages."""
    assert negotiate(accept_language=header) in LANGUAGES
