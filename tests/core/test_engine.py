"""Properties of rate() (hypothesis) and draws and team matches derived by hand."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo import MAX_COUNT, REFERENCE_RULES, BonusRule, Match, PlayerStats, Rules, rate, score_breakdown
from sedma_elo.core.engine import _rate_explained
from sedma_elo.core.rules import MAX_RATING

GOLDEN = Path(__file__).parents[1] / "golden" / "reference_vectors.csv"
FLOAT64_RULES = REFERENCE_RULES.replace(name="reference-f64", arithmetic="float64")
ratings = st.integers(-3000, 5000)
small = st.integers(0, 40)
# Counts are mostly small (where caps bite) but sometimes reach MAX_COUNT.
counts = st.one_of(small, st.integers(0, MAX_COUNT))
stats = st.builds(PlayerStats, counts, counts, counts, counts)
winners = st.sampled_from(["a", "b", "draw"])
HALF_UP_RULES = REFERENCE_RULES.replace(name="reference-half-up", rounding="half_up")
rule_sets = st.sampled_from([REFERENCE_RULES, FLOAT64_RULES, HALF_UP_RULES])
STAT_FIELDS = ("bad_moves", "won_by_16", "won_by_24", "won_by_4_and_last")
SWAP = {"a": "b", "b": "a", "draw": "draw"}


def _one(
    winner: str, sa: PlayerStats, sb: PlayerStats, ra: int, rb: int, rules: Rules = REFERENCE_RULES
) -> int:
    """alice's rating after one match against bob."""
    result = rate(Match.single("alice", "bob", winner, sa, sb), {"alice": ra, "bob": rb}, rules)  # type: ignore[arg-type]
    return result["alice"].rating_after


# ---------------------------------------------------------------------------- properties
@given(winners, stats, stats, ratings, ratings, rule_sets)
def test_swapping_sides_swaps_the_results(
    winner: str, sa: PlayerStats, sb: PlayerStats, ra: int, rb: int, rules: Rules
) -> None:
    """Rating A vs B and B vs A (winner swapped too) gives every player the same new rating."""
    ratings_before = {"alice": ra, "bob": rb}
    ab = rate(Match.single("alice", "bob", winner, sa, sb), ratings_before, rules)  # type: ignore[arg-type]
    ba = rate(Match.single("bob", "alice", SWAP[winner], sb, sa), ratings_before, rules)  # type: ignore[arg-type]
    assert ab.new_ratings == ba.new_ratings
    assert ab["alice"].change == ba["alice"].change


@given(winners, ratings, ratings, ratings, ratings, rule_sets, st.lists(stats, min_size=4, max_size=4))
def test_swapping_teams_swaps_the_results(
    winner: str, r1: int, r2: int, r3: int, r4: int, rules: Rules, st4: list[PlayerStats]
) -> None:
    """The swap property holds for two against two as well."""
    ids = ("p1", "p2", "p3", "p4")
    before = dict(zip(ids, (r1, r2, r3, r4), strict=True))
    stat_map = dict(zip(ids, st4, strict=True))
    ab = rate(Match(("p1", "p2"), ("p3", "p4"), winner, stat_map), before, rules)  # type: ignore[arg-type]
    ba = rate(Match(("p3", "p4"), ("p1", "p2"), SWAP[winner], stat_map), before, rules)  # type: ignore[arg-type]
    assert ab.new_ratings == ba.new_ratings


@given(winners, stats, stats, ratings, ratings, st.integers(1, MAX_COUNT), rule_sets)
def test_more_bad_moves_never_raise_a_rating(
    winner: str, sa: PlayerStats, sb: PlayerStats, ra: int, rb: int, extra: int, rules: Rules
) -> None:
    """Adding bad moves to a player's statistics never raises their new rating."""
    worse = replace(sa, bad_moves=min(MAX_COUNT, sa.bad_moves + extra))
    assert _one(winner, worse, sb, ra, rb, rules) <= _one(winner, sa, sb, ra, rb, rules)


@pytest.mark.parametrize("field", STAT_FIELDS[1:])
@given(data=st.data())
def test_more_bonus_rounds_never_lower_a_rating(field: str, data: st.DataObject) -> None:
    """Adding bonus rounds of any kind never lowers a rating, in float32 and float64."""
    winner, sa, sb = data.draw(winners), data.draw(stats), data.draw(stats)
    ra, rb, rules = data.draw(ratings), data.draw(ratings), data.draw(rule_sets)
    more = replace(sa, **{field: min(MAX_COUNT, getattr(sa, field) + data.draw(st.integers(1, MAX_COUNT)))})
    assert _one(winner, more, sb, ra, rb, rules) >= _one(winner, sa, sb, ra, rb, rules)


@pytest.mark.parametrize("field", STAT_FIELDS)
@pytest.mark.parametrize("outcome", ["win", "loss", "draw"])
def test_score_is_monotone_in_every_count_up_to_far_past_the_cap(field: str, outcome: str) -> None:
    """Exhaustively for counts 0..2000: the float32 adjusted score never moves the wrong way."""
    sign = -1 if field == "bad_moves" else 1
    base = PlayerStats(bad_moves=3, won_by_16=1, won_by_4_and_last=1)
    previous = None
    for n in range(2001):
        score = score_breakdown(outcome, replace(base, **{field: n})).unclamped  # type: ignore[arg-type]
        if previous is not None:
            assert sign * (score - previous) >= 0, n
        previous = score


@given(stats, winners)
def test_caps_bound_every_term(s: PlayerStats, winner: str) -> None:
    """Each bonus and the malus stay within their caps; the adjusted score within [0, 1]."""
    result = rate(Match.single("alice", "bob", winner, s, s), {})  # type: ignore[arg-type]
    score = result["alice"].score
    caps = {"won_by_16": 0.15, "won_by_24": 0.2, "won_by_4_and_last": 0.09}
    for term in score.bonuses:
        assert term.value <= caps[term.kind] + 1e-7
    assert score.malus.value <= 0.3 + 1e-7
    assert 0.0 <= score.adjusted <= 1.0


@pytest.mark.parametrize(
    ("field", "count", "cap"),
    [("won_by_16", 3, 0.15), ("won_by_24", 2, 0.2), ("won_by_4_and_last", 3, 0.09), ("bad_moves", 15, 0.3)],
)
def test_caps_are_reached_at_the_published_count(field: str, count: int, cap: float) -> None:
    """At cap/per rounds (3, 2, 3, 15) a term reaches its cap (to float32 precision) and stays there."""

    def value(n: int) -> float:
        s = score_breakdown("loss", replace(PlayerStats(), **{field: n}))
        if field == "bad_moves":
            return s.malus.value
        return next(t.value for t in s.bonuses if t.kind == field)

    assert value(count) == pytest.approx(cap, abs=1e-7)
    assert value(count + 1) == pytest.approx(cap, abs=1e-7)
    assert value(10**6) == value(count + 1)
    assert value(count - 1) < cap - 0.01


@given(st.integers(-50_000, 50_000))
def test_k_used_by_rate_follows_the_published_tiers(rating: int) -> None:
    """rate() uses K 40 below 1200, 32 below 1800, 24 below 2200 and 16 from 2200 on."""
    expected = 40 if rating < 1200 else 32 if rating < 1800 else 24 if rating < 2200 else 16
    result = rate(Match.single("alice", "bob", "a"), {"alice": rating, "bob": 1000})
    assert result["alice"].k == expected


@given(ratings, ratings)
def test_expected_scores_sum_to_one(ra: int, rb: int) -> None:
    """Both expectations come from the pre-match ratings and add up to 1."""
    result = rate(Match.single("alice", "bob", "draw"), {"alice": ra, "bob": rb})
    assert result["alice"].expected + result["bob"].expected == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------------------- by hand
def test_missing_ratings_start_at_the_initial_rating() -> None:
    """A player absent from the ratings starts at 1000: an equal win is +20 with K 40."""
    result = rate(Match.single("alice", "bob", "a"), {})
    assert result.new_ratings == {"alice": 1020, "bob": 980}


def test_draw_follows_the_documented_rule() -> None:
    """A draw scores 0.5 and each player keeps 55% of their bonus (hand-derived)."""
    # alice: 0.5 + 0.55 * 0.1 (one 24er) = 0.555; 40 * (0.555 - 0.5) = +2.2 -> 1002.
    # bob:   0.5 - 3 * 0.02 = 0.44;               40 * (0.44 - 0.5) = -2.4 -> 998.
    match = Match.single("alice", "bob", "draw", PlayerStats(won_by_24=1), PlayerStats(bad_moves=3))
    result = rate(match, {"alice": 1000, "bob": 1000})
    assert result["alice"].score.adjusted == pytest.approx(0.555, abs=1e-6)
    assert result["alice"].change == pytest.approx(2.2, abs=1e-4)
    assert result["bob"].change == pytest.approx(-2.4, abs=1e-4)
    assert result.new_ratings == {"alice": 1002, "bob": 998}


def test_draw_between_unequal_players_moves_them_together() -> None:
    """With no statistics a draw moves the weaker player up and the stronger down."""
    # expected(1000 vs 1400) = 1 / (1 + 10) = 1/11; K 40 and 32.
    result = rate(Match.single("alice", "bob", "draw"), {"alice": 1000, "bob": 1400})
    assert result["alice"].change == pytest.approx(40 * (0.5 - 1 / 11))
    assert result["bob"].change == pytest.approx(32 * (0.5 - 10 / 11))
    assert result.new_ratings == {"alice": 1016, "bob": 1387}


def test_team_match_uses_mean_team_ratings_and_own_k() -> None:
    """2-vs-2: expectation from mean team ratings, each player with own K and own stats (by hand)."""
    # Team a mean (1000 + 1200) / 2 = 1100, team b mean (1250 + 1350) / 2 = 1300:
    # expected_a = 1 / (1 + 10^(200/400)) = 1 / (1 + sqrt(10)).
    e = 1 / (1 + math.sqrt(10))
    match = Match(("alice", "carol"), ("bob", "dave"), "a", {"carol": PlayerStats(bad_moves=5)})
    result = rate(match, {"alice": 1000, "carol": 1200, "bob": 1250, "dave": 1350})
    assert result["alice"].expected == pytest.approx(e)
    assert result["bob"].expected == pytest.approx(1 - e)
    assert result["alice"].change == pytest.approx(40 * (1 - e))  # K 40 below 1200
    assert result["carol"].change == pytest.approx(32 * (0.9 - e), abs=1e-5)  # K 32 at 1200; -0.1 malus
    assert result["bob"].change == pytest.approx(32 * (0 - (1 - e)))
    # 1000 + 30.39 -> 1030; 1200 + 21.11 -> 1221; 1250 - 24.31 -> 1226; 1350 - 24.31 -> 1326.
    assert result.new_ratings == {"alice": 1030, "carol": 1221, "bob": 1226, "dave": 1326}


def test_team_match_with_summed_team_ratings() -> None:
    """With teams.rating = "sum": 2200 against 2600 gives expected 1/11 for side a."""
    rules = REFERENCE_RULES.replace(name="sum", team_rating="sum")
    match = Match(("alice", "carol"), ("bob", "dave"), "b", {})
    result = rate(match, {"alice": 1000, "carol": 1200, "bob": 1250, "dave": 1350}, rules)
    assert result["carol"].expected == pytest.approx(1 / 11)
    assert result["carol"].change == pytest.approx(32 * (0 - 1 / 11))


def test_loser_keeps_a_tenth_of_the_bonus() -> None:
    """A loser with two 24ers scores 0.1 * 0.2 = 0.02 (hand-derived)."""
    result = rate(Match.single("alice", "bob", "b", PlayerStats(won_by_24=2)), {"alice": 1000, "bob": 1000})
    assert result["alice"].score.adjusted == pytest.approx(0.02, abs=1e-7)
    assert result["alice"].change == pytest.approx(40 * (0.02 - 0.5), abs=1e-5)  # -19.2 -> 981
    assert result["alice"].rating_after == 981


@pytest.mark.parametrize(
    ("rounding", "before", "after"),
    [("half_even", 2200, 2200), ("half_even", 2201, 2202), ("half_up", 2200, 2201), ("half_up", 2201, 2202)],
)
def test_half_way_changes_follow_the_rounding_rule(rounding: str, before: int, after: int) -> None:
    """A change of exactly +0.5 rounds to even (C# Math.Round) or up, as the rules say."""
    # Binary-exact numbers: one 24er worth 0.0625, half kept on a draw -> score 0.53125;
    # equal ratings -> expected 0.5; K 16 from 2200 -> change 16 * 0.03125 = 0.5 exactly.
    rules = REFERENCE_RULES.replace(
        name="tie", rounding=rounding, bonus_24=BonusRule(0.0625, 0.2), draw_bonus_scale=0.5
    )
    match = Match.single("alice", "bob", "draw", PlayerStats(won_by_24=1), PlayerStats())
    result = rate(match, {"alice": before, "bob": before}, rules)
    assert result["alice"].change == 0.5
    assert result["alice"].rating_after == after


# ---------------------------------------------------------------------------- fast path
@given(winners, stats, stats, st.integers(-50_000, 50_000), st.integers(-50_000, 50_000), rule_sets)
def test_new_ratings_agree_with_the_explanation(
    winner: str, sa: PlayerStats, sb: PlayerStats, ra: int, rb: int, rules: Rules
) -> None:
    """The one-against-one fast path gives exactly the ratings of the explained path."""
    match = Match.single("alice", "bob", winner, sa, sb)  # type: ignore[arg-type]
    result = rate(match, {"alice": ra, "bob": rb}, rules)
    fast = result.new_ratings
    assert fast == {c.player_id: c.rating_after for c in result.changes}
    assert result == _rate_explained(match, {"alice": ra, "bob": rb}, rules)


@given(
    winners,
    stats,
    stats,
    st.integers(-50_000, 50_000),
    st.integers(-50_000, 50_000),
    st.integers(0, 500),
    st.integers(0, 500),
    rule_sets,
)
def test_fast_explanation_with_games_equals_the_explained_path(
    winner: str, sa: PlayerStats, sb: PlayerStats, ra: int, rb: int, ga: int, gb: int, rules: Rules
) -> None:
    """With games played given, the fast path's explanation is the explained path's, field by field."""
    match = Match.single("alice", "bob", winner, sa, sb)  # type: ignore[arg-type]
    games = {"alice": ga, "bob": gb}
    fast = rate(match, {"alice": ra, "bob": rb}, rules, games_played=games).changes
    assert fast == _rate_explained(match, {"alice": ra, "bob": rb}, rules, games).changes


def test_fast_path_keeps_the_range_note_when_a_rating_is_clamped() -> None:
    """A rating pushed out of the range is explained by the general path, with its note."""
    match = Match.single("alice", "bob", "a")
    result = rate(match, {"alice": MAX_RATING, "bob": MAX_RATING - 100})
    assert result["alice"].rating_after == MAX_RATING
    assert result["alice"].notes  # the range's note
    assert result == _rate_explained(match, {"alice": MAX_RATING, "bob": MAX_RATING - 100}, REFERENCE_RULES)


def test_fast_path_matches_every_reference_vector() -> None:
    """new_ratings (without building the explanation) reproduces all 3,000 C# vectors."""
    rows = GOLDEN.read_text().splitlines()
    header = rows[0].split(",")
    assert len(rows) == 3001
    for line in rows[1:]:
        row = dict(zip(header, line.split(","), strict=True))
        counts = [int(row[c]) for c in header[3:11]]
        sa = PlayerStats(counts[0], counts[2], counts[4], counts[6])
        sb = PlayerStats(counts[1], counts[3], counts[5], counts[7])
        match = Match.single("a", "b", "a" if row["player_a_won"] == "true" else "b", sa, sb)
        new = rate(match, {"a": int(row["rating_a"]), "b": int(row["rating_b"])}).new_ratings
        assert new == {"a": int(row["new_rating_a"]), "b": int(row["new_rating_b"])}, line


def test_explanation_uses_the_ratings_given_at_rate_time() -> None:
    """Changing the ratings dict after rate() does not change the (deferred) explanation."""
    ratings = {"alice": 1000, "bob": 1100}
    result = rate(Match.single("alice", "bob", "a"), ratings)
    ratings.update(result.new_ratings)
    assert result["alice"].rating_before == 1000
    assert result["bob"].rating_before == 1100


def test_result_is_read_only() -> None:
    """A RatingResult's attributes cannot be reassigned."""
    result = rate(Match.single("alice", "bob", "a"), {})
    with pytest.raises(AttributeError):
        result.match = result.match  # type: ignore[misc]
    result.new_ratings["alice"] = 0
    assert result.new_ratings["alice"] == 1020


def test_invalid_rating_error_is_the_same_on_both_paths() -> None:
    """The fast path names the same field as the explained path."""
    from sedma_elo import ValidationError

    for team_a, team_b in ((("alice",), ("bob",)), (("alice", "carol"), ("bob", "dave"))):
        with pytest.raises(ValidationError, match=r"^ratings\.bob: must be within"):
            rate(Match(team_a, team_b, "a", {}), {"bob": 10**6})


def test_result_pickles_and_copies() -> None:
    """A result with a deferred explanation pickles and deep-copies to an equal result."""
    import copy
    import pickle

    result = rate(Match.single("alice", "bob", "a", PlayerStats(won_by_16=1)), {"bob": 1100})
    assert pickle.loads(pickle.dumps(result)) == result
    assert copy.deepcopy(result) == result
    assert copy.copy(result).new_ratings == result.new_ratings
