"""The explanation object (JSON) and the plain-words sentences, checked against hand-derived numbers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo import REFERENCE_RULES, BonusRule, Match, PlayerStats, Rules, rate
from sedma_elo.core.explain import change_to_dict, explain_player, explain_result, result_to_dict

PLAYER_KEYS = {
    "player_id", "side", "outcome", "teammates", "opponents", "rating_before", "k", "k_reason",
    "team_rating", "opponent_rating", "expected", "score", "change", "rating_after", "delta",
    "games_played", "notes", "explanation",
}  # fmt: skip
SCORE_KEYS = {
    "base", "bonuses", "bonus_total", "bonus_scale", "bonus_scaled", "malus", "unclamped", "adjusted",
    "clamp", "clamp_cut", "bonus_erased", "malus_erased",
}  # fmt: skip
TERM_KEYS = {"count", "cap", "uncapped", "value", "capped"}


def _capped_win() -> Match:
    """alice wins with three 16ers and two bad moves; bob loses with one 16er and five 24ers."""
    return Match.single(
        "alice", "bob", "a", PlayerStats(bad_moves=2, won_by_16=3), PlayerStats(won_by_16=1, won_by_24=5)
    )


def test_object_has_the_documented_fields() -> None:
    """The explanation object has exactly the documented field names at every level."""
    data = result_to_dict(rate(_capped_win(), {"alice": 1000, "bob": 1100}))
    assert set(data) == {"rules", "match", "new_ratings", "players"}
    for player in data["players"]:
        assert set(player) == PLAYER_KEYS
        assert set(player["score"]) == SCORE_KEYS
        assert set(player["score"]["bonuses"]) == {"won_by_16", "won_by_24", "won_by_4_and_last"}
        for term in player["score"]["bonuses"].values():
            assert set(term) == TERM_KEYS | {"per_round"}
        assert set(player["score"]["malus"]) == TERM_KEYS | {"per_bad_move"}


def test_object_is_json_and_round_trips() -> None:
    """json.dumps/json.loads returns an equal object (only JSON types inside)."""
    data = result_to_dict(rate(_capped_win(), {"alice": 1000, "bob": 1100}))
    assert json.loads(json.dumps(data)) == data


def test_object_values_match_the_hand_calculation() -> None:
    """alice: 1 + 0.15 - 0.04 = 1.11 clamped to 1, the clamp erasing 0.11 of the bonus; +26."""
    alice = change_to_dict(rate(_capped_win(), {"alice": 1000, "bob": 1100}), "alice")
    expected = 1 / (1 + 10 ** (100 / 400))
    assert alice["expected"] == pytest.approx(expected)
    assert alice["change"] == pytest.approx(40 * (1 - expected))
    assert (alice["rating_before"], alice["rating_after"], alice["delta"]) == (1000, 1026, 26)
    assert (alice["k"], alice["k_reason"], alice["outcome"], alice["opponents"]) == (
        40,
        "rating 1000 is below 1200",
        "win",
        ["bob"],
    )
    s = alice["score"]
    # Single-precision values are written with their shortest digits.
    assert s["bonuses"]["won_by_16"] == {
        "count": 3, "per_round": 0.05, "cap": 0.15, "uncapped": 0.15, "value": 0.15, "capped": False
    }  # fmt: skip
    assert s["malus"]["value"] == 0.04
    assert (s["unclamped"], s["adjusted"], s["clamp"]) == (pytest.approx(1.11), 1.0, "max")
    assert s["bonus_erased"] == pytest.approx(0.11)
    assert s["malus_erased"] == 0.0


def test_loser_object_shows_the_scale_and_the_cap() -> None:
    """bob: 0.05 + min(0.5, 0.2) = 0.25, scaled by 0.1 to 0.025; the 24er cap hit."""
    bob = change_to_dict(rate(_capped_win(), {"alice": 1000, "bob": 1100}), "bob")
    s = bob["score"]
    assert s["bonuses"]["won_by_24"]["capped"] is True
    assert s["bonuses"]["won_by_24"]["uncapped"] == 0.5
    assert s["bonuses"]["won_by_24"]["value"] == 0.2
    assert (s["bonus_total"], s["bonus_scale"], s["bonus_scaled"]) == (0.25, 0.1, 0.025)
    assert (s["adjusted"], s["clamp"]) == (0.025, "none")


def test_win_sentences() -> None:
    """A capped win: headline, K, bonus, malus, clamp erasing part of the bonus, the rounding."""
    result = rate(_capped_win(), {"alice": 1000, "bob": 1100})
    assert explain_player(result, "alice") == [
        "alice won against bob, a stronger player (ratings 1000 against 1100, expected score 0.36): "
        "+26, from 1000 to 1026.",
        "K is 40: rating 1000 is below 1200.",
        "A win scores 1; three 16ers add 3 × 0.05 = +0.15.",
        "Two bad moves cost 2 × 0.02 = −0.04.",
        "Adjusted score: 1 + 0.15 − 0.04 = 1.11, above the maximum, so alice's score was clamped to 1: "
        "the clamp erased 0.11 of the bonus of +0.15.",
        "Change: K × (score − expected) = 40 × (1 − 0.36) = +25.60, rounded to +26.",
    ]


def test_second_person() -> None:
    """second_person=True addresses the player."""
    result = rate(_capped_win(), {"alice": 1000, "bob": 1100})
    sentences = explain_player(result, "alice", second_person=True)
    assert sentences[0].startswith("You won against bob, a stronger player")
    assert "so your score was clamped to 1" in sentences[4]


def test_loss_keeps_a_tenth_of_the_bonus() -> None:
    """The loser's sentences name the 24er cap and the 10% share: 0.1 * 0.25 = 0.025."""
    result = rate(_capped_win(), {"alice": 1000, "bob": 1100})
    assert explain_player(result, "bob")[2:] == [
        "A loss scores 0; one 16er adds 1 × 0.05 = +0.05; "
        "five 24ers would add 5 × 0.1 = +0.5, capped at +0.2.",
        "As the loser bob keeps 10% of the bonus of +0.25: +0.025.",
        "Adjusted score: 0 + 0.025 = 0.025.",
        "Change: K × (score − expected) = 40 × (0.025 − 0.64) = −24.60, rounded to −25.",
    ]


def test_clamp_at_zero_erases_the_malus() -> None:
    """A loser's malus below 0 is erased by the clamp, and the sentence says so."""
    match = Match.single("alice", "bob", "b", PlayerStats(bad_moves=20), PlayerStats())
    sentences = explain_player(rate(match, {}), "alice")
    assert sentences[2:] == [
        "A loss scores 0.",
        "20 bad moves would cost 20 × 0.02 = −0.4, capped at −0.3.",
        "Adjusted score: 0 − 0.3 = −0.3, below the minimum, so alice's score was clamped to 0: "
        "the clamp erased the whole malus of −0.3.",
        "Change: K × (score − expected) = 40 × (0 − 0.50) = −20.00, rounded to −20.",
    ]


def test_clamp_at_one_erases_the_whole_bonus() -> None:
    """A winner's bonus without malus is erased completely by the clamp at 1."""
    match = Match.single("alice", "bob", "a", PlayerStats(won_by_24=1), PlayerStats())
    assert explain_player(rate(match, {}), "alice")[3] == (
        "Adjusted score: 1 + 0.1 = 1.1, above the maximum, so alice's score was clamped to 1: "
        "the clamp erased the whole bonus of +0.1."
    )


def test_draw_sentences() -> None:
    """A draw scores 0.5 and keeps 55% of the bonus: 0.5 + 0.55 * 0.09 = 0.5495 (cap 0.09)."""
    match = Match.single("alice", "bob", "draw", PlayerStats(won_by_4_and_last=5), PlayerStats())
    sentences = explain_player(rate(match, {"alice": 1000, "bob": 1000}), "alice")
    assert sentences[0] == (
        "alice drew with bob, an equally rated player (ratings 1000 against 1000, expected score 0.50): "
        "+2, from 1000 to 1002."
    )
    assert sentences[2:] == [
        "A draw scores 0.5; five rounds won with 4 and last would add 5 × 0.03 = +0.15, capped at +0.09.",
        "On a draw alice keeps 55% of the bonus of +0.09: +0.0495.",
        "Adjusted score: 0.5 + 0.0495 = 0.5495.",
        "Change: K × (score − expected) = 40 × (0.5495 − 0.50) = +1.98, rounded to +2.",
    ]


def test_team_sentences() -> None:
    """A team headline names the partner, the opponents and both team ratings (means)."""
    match = Match(("alice", "carol"), ("bob", "dave"), "a", {})
    result = rate(match, {"alice": 1000, "carol": 1200, "bob": 1250, "dave": 1350})
    text = explain_result(result)
    assert list(text) == ["alice", "carol", "bob", "dave"]
    assert text["carol"][0] == (
        "carol (with alice) won against bob and dave, a stronger team (team ratings 1100 against 1300, "
        "expected score 0.24): +24, from 1200 to 1224."
    )
    assert text["carol"][1] == "K is 32: rating 1200 is in [1200, 1800)."
    assert text["carol"][2:4] == [
        "A win scores 1.",
        "With no bonus and no malus the adjusted score stays 1.",
    ]
    assert change_to_dict(result, "dave")["teammates"] == ["bob"]


def test_exact_half_way_rounding_is_said() -> None:
    """When the unrounded rating is exactly x.5 the sentence says how it was rounded."""
    rules = REFERENCE_RULES.replace(name="tie", bonus_24=BonusRule(0.0625, 0.2), draw_bonus_scale=0.5)
    match = Match.single("alice", "bob", "draw", PlayerStats(won_by_24=1), PlayerStats())
    last = explain_player(rate(match, {"alice": 2200, "bob": 2200}, rules), "alice")[-1]
    assert last.endswith("= +0.5; 2200.5 is exactly half-way and was rounded to 2200 (+0).")


def test_unknown_player_is_a_key_error() -> None:
    """Asking for someone who did not play raises KeyError."""
    with pytest.raises(KeyError):
        explain_player(rate(_capped_win(), {}), "zoe")


_counts = st.integers(0, 40)
_stats = st.builds(PlayerStats, _counts, _counts, _counts, _counts)
_rules = st.sampled_from(
    [
        REFERENCE_RULES,
        REFERENCE_RULES.replace(name="f64", arithmetic="float64"),
        REFERENCE_RULES.replace(name="narrow", score_min=0.1, score_max=0.9, loser_bonus_scale=0.0),
    ]
)


@given(
    st.sampled_from(["a", "b", "draw"]),
    st.booleans(),
    st.lists(_stats, min_size=4, max_size=4),
    st.lists(st.integers(-50_000, 50_000), min_size=4, max_size=4),
    _rules,
)
def test_any_match_explains_to_strict_json(
    winner: str, teams: bool, stats: list[PlayerStats], ratings: list[int], rules: Rules
) -> None:
    """Every match explains: strict JSON (no NaN), a headline with the delta, the clamp named when it hit."""
    ids = ["p1", "p2", "p3", "p4"]
    team_a, team_b = (("p1", "p2"), ("p3", "p4")) if teams else (("p1",), ("p3",))
    by_id = {p: s for p, s in zip(ids, stats, strict=True) if p in team_a + team_b}
    match = Match(team_a, team_b, winner, by_id)  # type: ignore[arg-type]
    result = rate(match, dict(zip(ids, ratings, strict=True)), rules)
    data = result_to_dict(result)
    json.dumps(data, allow_nan=False)
    for player in data["players"]:
        sentences = player["explanation"]
        delta = player["delta"]
        sign = "+" if delta >= 0 else "\u2212"
        assert (
            f": {sign}{abs(delta)}, from {player['rating_before']} to {player['rating_after']}."
            in sentences[0]
        )
        clamped = player["score"]["clamp"] != "none"
        assert any("clamped to" in s for s in sentences) == clamped
