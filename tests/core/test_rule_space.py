"""The whole declared coefficient space: the fold, the kernel and the backtest's forecaster agree.

Rule sets are drawn from the declarations (tests/core/strategies.py): K by rating, by games, sum,
product, min, max; zero-sum; floor; margin; draws; team ratings as mean or sum; both roundings
and precisions; ratings at the K tier edges, at the limits and in exact ties.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sedma_elo import REFERENCE_RULES, Match, PlayerStats, Rules, rate
from sedma_elo.analysis.metrics import Split
from sedma_elo.analysis.sedma import sedma_rules
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.batch.replay import replay
from sedma_elo.core.coefficients import MAX_RATING, MIN_RATING
from sedma_elo.core.fold import RatingState, fold

from .strategies import EDGE_RATINGS, PLAYERS, RATINGS, STATS, WINNERS, any_rules, team_history


@st.composite
def single_history(draw: st.DrawFn) -> list[Match]:
    """Up to 30 one-against-one matches among five players."""
    out = []
    for i in range(draw(st.integers(1, 30))):
        a, b = draw(st.lists(st.sampled_from(PLAYERS), min_size=2, max_size=2, unique=True))
        out.append(Match.single(a, b, draw(WINNERS), draw(STATS), draw(STATS), match_id=f"m{i}"))  # type: ignore[arg-type]
    return out


STARTS = st.dictionaries(st.sampled_from(PLAYERS), RATINGS)
GAMES = st.dictionaries(st.sampled_from(PLAYERS), st.integers(0, 40))


def _fold(
    matches: list[Match], rules: Rules, ratings: dict[str, int], games: dict[str, int]
) -> list[tuple[int, ...]]:
    state = RatingState.of(ratings, games)
    return [
        tuple(c.rating_before for c in r.changes) + tuple(c.rating_after for c in r.changes)
        for r in fold(matches, rules, state)
    ]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(any_rules(), single_history(), STARTS, GAMES)
@example(REFERENCE_RULES, [Match.single("p0", "p1", "a")], {"p0": 1199, "p1": 1199}, {})
@example(
    REFERENCE_RULES.replace(rounding="half_up"),
    [Match.single("p0", "p1", "draw")],
    {"p0": 1200, "p1": 1200},
    {},
)
@example(REFERENCE_RULES, [Match.single("p0", "p1", "a")], {"p0": MAX_RATING, "p1": MAX_RATING}, {})
def test_fold_and_kernel_agree_on_every_rating(
    rules: Rules, matches: list[Match], starts: dict[str, int], games: dict[str, int]
) -> None:
    """For any declared rule set and 1v1 history, the kernel's before/after ratings equal the fold's."""
    expected = _fold(matches, rules, starts, games)
    result = replay(
        matches, rules, initial_ratings=starts, initial_games_played=games, record=True, method="kernel"
    )
    assert result.record is not None
    got = [
        tuple(b) + tuple(a)
        for b, a in zip(result.record.before.tolist(), result.record.after.tolist(), strict=True)
    ]
    assert got == expected
    state = RatingState.of(starts, games)
    for _ in fold(matches, rules, state):
        pass
    assert {p: r for p, r in result.ratings.items() if p in state.ratings} == state.ratings


@settings(max_examples=100, deadline=None)
@given(any_rules(), single_history())
def test_backtest_forecaster_agrees_with_the_fold(rules: Rules, matches: list[Match]) -> None:
    """The backtest's Sedma forecaster sees the fold's pre-match ratings and ends at its final ratings."""
    table = table_from_matches(matches)
    fc = sedma_rules(rules)(table, Split(len(table), len(table), len(table)))
    state = RatingState()
    before = [(r.changes[0].rating_before, r.changes[1].rating_before) for r in fold(matches, rules, state)]
    assert fc.rating_a is not None and fc.rating_b is not None and fc.final is not None
    assert list(zip(fc.rating_a.tolist(), fc.rating_b.tolist(), strict=True)) == before
    assert dict(zip(table.players, fc.final.tolist(), strict=True)) == state.ratings


@settings(max_examples=200, deadline=None)
@given(any_rules(), team_history(), STARTS, GAMES)
@example(
    REFERENCE_RULES.replace(team_rating="sum"),
    [Match(("p0", "p1"), ("p2", "p3"), "a", {})],
    {"p0": MIN_RATING, "p1": MIN_RATING, "p2": MAX_RATING, "p3": MAX_RATING},
    {},
)
@example(
    REFERENCE_RULES.replace(team_rating="sum"),
    [Match(("p0", "p1"), ("p2", "p3"), "b", {})],
    {"p0": MAX_RATING, "p1": MAX_RATING, "p2": MIN_RATING, "p3": MIN_RATING},
    {},
)
def test_every_rule_set_keeps_every_rating_in_range(
    rules: Rules, matches: list[Match], starts: dict[str, int], games: dict[str, int]
) -> None:
    """Under any declared rule set, teams included, rate() never fails and every rating stays in range."""
    state = RatingState.of(starts, games)
    for result in fold(matches, rules, state):
        for change in result.changes:
            assert MIN_RATING <= change.rating_after <= MAX_RATING
            assert 0.0 <= change.expected <= 1.0


@given(st.sampled_from(EDGE_RATINGS), st.sampled_from(EDGE_RATINGS))
def test_fast_path_equals_the_explained_path_at_the_edges(ra: int, rb: int) -> None:
    """At the K tier edges, limits and ties, rate()'s new ratings equal its own explanation's."""
    for winner in ("a", "b", "draw"):
        result = rate(
            Match.single("x", "y", winner, PlayerStats(won_by_16=1), PlayerStats()), {"x": ra, "y": rb}
        )  # type: ignore[arg-type]
        assert result.new_ratings == {c.player_id: c.rating_after for c in result.changes}


def test_team_sum_beyond_the_double_range_expects_zero() -> None:
    """2v2 sums 200,000 apart: the underdog expects 0.0 (C#: 1 / (1 + Infinity)), no OverflowError."""
    rules = REFERENCE_RULES.replace(team_rating="sum")
    low = {"p0": MIN_RATING, "p1": MIN_RATING, "p2": MAX_RATING, "p3": MAX_RATING}
    result = rate(Match(("p0", "p1"), ("p2", "p3"), "a", {}), low, rules)
    assert result["p0"].expected == 0.0 and result["p2"].expected == 1.0
    assert result["p0"].rating_after == MIN_RATING + 40  # K 40 * (1 - 0)
    assert np.isfinite(result["p2"].change)
