"""The gettext catalogs: every message the sources use is translated in every language, correctly."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from sedma_elo.i18n import LANGUAGES, catalog_text, translations

ROOT = Path(__file__).resolve().parents[2]
#: The extraction keywords of `make messages` (Makefile), with gettext's defaults.
KEYWORDS = {
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "_say": (2,),
    "N_": None,
    "Np_": (1, 2),
}
FIELD = re.compile(r"\{(\w+)\}")
TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]


def _source_messages() -> set[str | tuple[str, ...]]:
    """The messages Babel extracts from the sources with the project's mapping (babel.cfg)."""
    with open(ROOT / "babel.cfg", encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    found: set[str | tuple[str, ...]] = set()
    for _, _, message, _, _ in extract_from_dir(str(ROOT), method_map, options_map, keywords=KEYWORDS):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def _catalog(lang: str) -> Catalog:
    return read_po(io.StringIO(catalog_text(lang)), locale="zh_Hans_CN" if lang == "zh" else lang)


SOURCE = _source_messages()


def test_the_sources_have_messages() -> None:
    """Extraction finds the messages of the pages, the sentences, the rules' reasons and the CLI tables."""
    assert "Leaderboard" in SOURCE
    assert ("{count} 16er", "{count} 16ers") in SOURCE
    assert "K is {k}: {reason}." in SOURCE
    assert "rating floor: raised from {after} to {kept}" in SOURCE  # core/reasons.py
    assert "rating before" in SOURCE  # the `rate` table (cli/explanation.py)
    assert len(SOURCE) > 150


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_message_is_translated(lang: str) -> None:
    """Each message of the sources is in the catalog, not fuzzy, with every plural form filled in."""
    catalog = _catalog(lang)
    missing = []
    for message in sorted(SOURCE, key=str):
        key = message if isinstance(message, str) else message[0]
        entry = catalog.get(key)
        if entry is None or entry.fuzzy:
            missing.append(key)
            continue
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if isinstance(message, tuple):
            assert len(forms) == catalog.num_plurals, (lang, key)
        if not all(forms):
            missing.append(key)
    assert not missing, f"{lang} lacks {len(missing)} messages: {missing[:10]}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_translations_keep_the_fields(lang: str) -> None:
    """A translation uses exactly the message's {fields} (the digit {n} may stand for a counted {count})."""
    for entry in _catalog(lang):
        if not entry.id:
            continue
        ids = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        wanted = set(FIELD.findall(ids[-1]))
        for form in forms:
            got = set(FIELD.findall(form))
            if "count" in wanted:
                got = {"count" if f == "n" else f for f in got}
            # A singular form may spell out "one" instead of {n} ("das erste Spiel").
            if isinstance(entry.id, tuple) and form is forms[0]:
                assert got <= wanted, (lang, entry.id, form)
            else:
                assert got == wanted, (lang, entry.id, form)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_compiled_catalog_translates(lang: str) -> None:
    """The catalog compiled at run time answers in its language (not the English message)."""
    tr = translations(lang)
    assert tr.gettext("Leaderboard") != "Leaderboard"
    assert tr.ngettext("{n} win", "{n} wins", 3) != "{n} wins"


#: The game's terms as the makers' post words them in each language (../shared/seeds/): the
#: translation of "{count} 16er" and of "{count} round won with 4 and last" must use these words.
POST_TERMS = {
    "de": ("mit 16 Punkten", "4 und zuletzt"),
    "it": ("16 punti", "4 e ultimo"),
    "es": ("16 puntos", "4 y último"),
    "sk": ("16 bodmi", "štyrmi bodmi a posledným zdvihom"),
    "zh": ("赢得 16 分", "获得四分并赢得最后一墩"),
}


@pytest.mark.parametrize("lang", TRANSLATED)
def test_game_terms_follow_the_post(lang: str) -> None:
    """16ers and "4 and last" are named with the post's own words in each language."""
    tr = translations(lang)
    sixteen, four_last = POST_TERMS[lang]
    assert sixteen in tr.ngettext("{count} 16er", "{count} 16ers", 3)
    assert four_last in tr.ngettext(
        "{count} round won with 4 and last", "{count} rounds won with 4 and last", 2
    )
