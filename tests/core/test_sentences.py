"""The sentences in every language: rebuilt from the JSON form, translated, worked out by hand."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedma_elo import Match, PlayerStats, rate
from sedma_elo.core.explain import change_to_dict, explain_change, explain_player
from sedma_elo.core.sentences import SIMILAR_RATING, k_reason_text
from sedma_elo.i18n import LANGUAGES, translations

_counts = st.integers(0, 12)
_stats = st.builds(PlayerStats, _counts, _counts, _counts, _counts)
_match = st.builds(
    lambda winner, teams, s: Match(
        ("p1", "p2") if teams else ("p1",),
        ("p3", "p4") if teams else ("p3",),
        winner,
        {p: x for p, x in zip(("p1", "p2", "p3", "p4"), s, strict=True) if teams or p in ("p1", "p3")},
    ),
    st.sampled_from(["a", "b", "draw"]),
    st.booleans(),
    st.lists(_stats, min_size=4, max_size=4),
)
_ratings = st.lists(st.integers(100, 3000), min_size=4, max_size=4).map(
    lambda r: dict(zip(("p1", "p2", "p3", "p4"), r, strict=True))
)
ENGLISH_WORDS = re.compile(
    r"\b(won against|lost to|drew with|scores|keeps|Adjusted score|rounded to|capped at)\b"
)


@settings(deadline=None)  # timing on a shared, loaded machine is not the property
@given(_match, _ratings, st.booleans())
def test_json_form_rebuilds_the_same_sentences(match: Match, ratings: dict[str, int], second: bool) -> None:
    """explain_change(change_to_dict(...)) equals explain_player(...) for any match (English)."""
    result = rate(match, ratings)
    for change in result.changes:
        data = change_to_dict(result, change.player_id)
        assert explain_change(data, second_person=second) == explain_player(
            result, change.player_id, second_person=second
        )


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
@settings(deadline=None)  # timing on a shared, loaded machine is not the property
@given(match=_match, ratings=_ratings, second=st.booleans())
def test_every_language_fills_every_field(
    lang: str, match: Match, ratings: dict[str, int], second: bool
) -> None:
    """Translated sentences have no unfilled {field}, no English verb left, and the same numbers' signs."""
    tr = translations(lang)
    result = rate(match, ratings)
    for change in result.changes:
        english = explain_player(result, change.player_id, second_person=second)
        local = explain_player(result, change.player_id, second_person=second, translator=tr)
        assert len(local) == len(english)
        for sentence in local:
            assert "{" not in sentence and "}" not in sentence
            assert not ENGLISH_WORDS.search(sentence), sentence
        assert local != english


def test_german_capped_win_worked_by_hand() -> None:
    """alice (1000) beats bob (1100) with three 16ers and two bad moves: the German sentences."""
    match = Match.single(
        "alice", "bob", "a", PlayerStats(bad_moves=2, won_by_16=3), PlayerStats(won_by_16=1, won_by_24=5)
    )
    sentences = explain_player(
        rate(match, {"alice": 1000, "bob": 1100}), "alice", translator=translations("de")
    )
    assert sentences[0] == (
        "alice gewann gegen bob – ein stärkerer Spieler (Wertungen 1000 gegen 1100, erwartete Wertung 0,36): "
        "+26, von 1000 auf 1026."
    )
    assert sentences[1] == "K ist 40: Wertung 1000 liegt unter 1200."
    assert sentences[2] == "Ein Sieg zählt 1; 3 gewonnene Runden mit 16 Punkten bringen 3 × 0,05 = +0,15."
    assert sentences[3] == "2 schlechte Züge kosten 2 × 0,02 = −0,04."


def test_decimal_mark_spares_player_ids() -> None:
    """German writes 0,5 for numbers, but a player id such as "v1.5" is printed as it is."""
    match = Match.single("v1.5", "x2.0", "draw", PlayerStats(won_by_4_and_last=5), PlayerStats())
    sentences = explain_player(
        rate(match, {"v1.5": 1000, "x2.0": 1000}), "v1.5", translator=translations("de")
    )
    assert sentences[0].startswith("v1.5 spielte unentschieden gegen x2.0 – ")
    assert "erwartete Wertung 0,50" in sentences[0]
    assert "Bei einem Unentschieden behält v1.5 55 % des Bonus von +0,09: +0,0495." in sentences


def test_slovak_plural_forms() -> None:
    """Slovak has three forms: 1 kolo, 2-4 kolá, 5+ kôl."""
    tr = translations("sk")
    forms = [tr.ngettext("{count} 16er", "{count} 16ers", n).format(n=n, count=n) for n in (1, 3, 7)]
    assert forms == ["1 kolo vyhrané 16 bodmi", "3 kolá vyhrané 16 bodmi", "7 kôl vyhraných 16 bodmi"]


def test_small_gaps_are_not_called_stronger() -> None:
    """A 2-point gap is "similarly rated"; a gap of SIMILAR_RATING or more is "stronger"."""
    match = Match.single("alice", "bob", "a", PlayerStats(), PlayerStats())
    close = explain_player(rate(match, {"alice": 1000, "bob": 1002}), "alice")[0]
    assert "bob, a similarly rated player (" in close
    far = explain_player(rate(match, {"alice": 1000, "bob": 1000 + int(SIMILAR_RATING)}), "alice")[0]
    assert "bob, a stronger player (" in far


def test_k_reasons_of_the_tiers_are_translated() -> None:
    """The rules' reasons are translated with their numbers; a text the rules do not write stays as it is."""
    tr = translations("it")
    assert k_reason_text("rating 1000 is below 1200", tr) == "la valutazione 1000 è sotto 1200"
    assert k_reason_text("rating 1500 is in [1200, 1800)", tr) == "la valutazione 1500 è in [1200, 1800)"
    assert (
        k_reason_text("rating 2300 is at or above 2200", tr)
        == "la valutazione 2300 è pari o superiore a 2200"
    )
    assert (
        k_reason_text("K by games played: 250 / (3 + 5)^0.4 floored at 0 = 108.8", tr)
        == "K per partite giocate: 250 / (3 + 5)^0,4 con minimo 0 = 108,8"
    )
    assert k_reason_text("K by mood: 250", tr) == "K by mood: 250"
