"""rate() where ports go wrong: K tier edges, equal ratings, rounding midpoints (hypothesis + by hand).

The other property tests draw ratings uniformly, which almost never lands on a tier edge or on
equal ratings; with the reference K (all even) an exact midpoint cannot occur at all (see
tests/golden/README.md), so the midpoints come from rules with odd K.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sedma_elo import (
    MAX_COUNT,
    MAX_RATING,
    MIN_RATING,
    REFERENCE_RULES,
    KTier,
    Match,
    PlayerStats,
    Rules,
    ValidationError,
    rate,
)
from sedma_elo.batch.history import HistoryArrays
from sedma_elo.batch.kernel import run_kernel
from sedma_elo.core.engine import _rate_explained

ODD_K = REFERENCE_RULES.replace(
    name="odd-k", k_tiers=(KTier(1200, 41), KTier(1800, 33), KTier(2200, 25)), k_top=17
)
RULE_SETS = [
    REFERENCE_RULES,
    REFERENCE_RULES.replace(name="half-up", rounding="half_up"),
    ODD_K,
    ODD_K.replace(name="odd-k-half-up", rounding="half_up"),
    ODD_K.replace(name="odd-k-f64", arithmetic="float64"),
]
EDGES = [1199, 1200, 1201, 1799, 1800, 1801, 2199, 2200, 2201, MIN_RATING, MAX_RATING, 0, 1000]
edge_ratings = st.one_of(st.sampled_from(EDGES), st.integers(MIN_RATING, MAX_RATING), st.integers(900, 2400))


@st.composite
def rating_pairs(draw: st.DrawFn) -> tuple[int, int]:
    """Two ratings: often equal (expected exactly 0.5) or a few points apart, often on a tier edge."""
    a = draw(edge_ratings)
    b = draw(
        st.one_of(
            st.just(a),
            st.integers(-5, 5).map(lambda d: min(max(a + d, MIN_RATING), MAX_RATING)),
            edge_ratings,
        )
    )
    return a, b


counts = st.one_of(st.integers(0, 4), st.sampled_from([14, 15, 16, MAX_COUNT]))
stats = st.builds(PlayerStats, counts, counts, counts, counts)
winners = st.sampled_from(["a", "b", "draw"])


@given(winners, stats, stats, rating_pairs(), st.sampled_from(RULE_SETS))
@example("a", PlayerStats(), PlayerStats(), (1000, 1000), ODD_K)  # 1020.5 and 979.5: both midpoints
@example("b", PlayerStats(), PlayerStats(), (1200, 1199), REFERENCE_RULES)  # K 32 against K 40
def test_fast_path_equals_the_explanation_at_edges_and_ties(
    winner: str, sa: PlayerStats, sb: PlayerStats, pair: tuple[int, int], rules: Rules
) -> None:
    """At tier edges, equal ratings and rounding midpoints the fast ratings equal the explained ones."""
    ra, rb = pair
    match = Match.single("alice", "bob", winner, sa, sb)  # type: ignore[arg-type]
    fast = rate(match, {"alice": ra, "bob": rb}, rules).new_ratings
    explained = _rate_explained(match, {"alice": ra, "bob": rb}, rules, None)
    assert fast == {c.player_id: c.rating_after for c in explained.changes}


@pytest.mark.parametrize(
    ("rounding", "winner_after", "loser_after"), [("half_even", 1020, 980), ("half_up", 1021, 980)]
)
def test_a_midpoint_rounds_as_the_rules_say_on_every_path(
    rounding: str, winner_after: int, loser_after: int
) -> None:
    """K 41, equal ratings, a plain win: 1000 +- 20.5 rounds to even (1020, 980) or up (1021, 980)."""
    rules = ODD_K.replace(name=f"odd-k-{rounding}", rounding=rounding)
    match = Match.single("alice", "bob", "a")
    result = rate(match, {"alice": 1000, "bob": 1000}, rules)
    assert result.new_ratings == {"alice": winner_after, "bob": loser_after}
    assert (result["alice"].rating_after, result["bob"].rating_after) == (winner_after, loser_after)
    ratings = np.array([1000, 1000], dtype=np.int64)
    run_kernel(HistoryArrays.from_matches([match]), rules, ratings, np.zeros(2, dtype=np.int64))
    assert ratings.tolist() == [winner_after, loser_after]


@pytest.mark.parametrize(
    ("rating", "k"), [(1199, 40), (1200, 32), (1799, 32), (1800, 24), (2199, 24), (2200, 16)]
)
def test_fast_path_uses_the_k_of_each_tier_edge(rating: int, k: int) -> None:
    """A plain win at equal ratings moves the winner by K / 2 on the fast path: K at each tier edge."""
    new = rate(Match.single("alice", "bob", "a"), {"alice": rating, "bob": rating}).new_ratings
    assert new == {"alice": rating + k // 2, "bob": rating - k // 2}


@pytest.mark.parametrize("player", ["alice", "bob"])
@pytest.mark.parametrize("bad", [1000.0, True, MAX_RATING + 1, MIN_RATING - 1, "1000"])
def test_fast_path_refuses_a_rating_that_is_not_an_int_in_range(player: str, bad: object) -> None:
    """A float, bool, text or out-of-range rating of either player is refused, naming the field and value."""
    ratings: dict[str, object] = {"alice": 1000, "bob": 1000, player: bad}
    with pytest.raises(ValidationError) as caught:
        rate(Match.single("alice", "bob", "a"), ratings)  # type: ignore[arg-type]
    assert caught.value.field == f"ratings.{player}"
    assert caught.value.reason.endswith(repr(bad))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_fast_path_checks_games_played_of_each_player(bad: object) -> None:
    """games_played given to the fast path is checked per player, naming the field; valid counts pass."""
    match = Match.single("alice", "bob", "a")
    ok = rate(match, {"alice": 1000, "bob": 1000}, games_played={"alice": 3, "bob": 0})
    assert ok.new_ratings == {"alice": 1020, "bob": 980}
    with pytest.raises(ValidationError, match=r"games_played\.bob"):
        rate(match, {"alice": 1000, "bob": 1000}, games_played={"alice": 3, "bob": bad})  # type: ignore[dict-item]


@pytest.mark.parametrize("given", [{}, {"alice": PlayerStats()}, {"bob": PlayerStats()}])
def test_fast_path_counts_a_player_without_stats_as_all_zero(given: dict[str, PlayerStats]) -> None:
    """A Match built without a player's stats entry rates as all counts 0: 1000 vs 1000, K 40, 1000 +- 20."""
    match = Match(("alice",), ("bob",), "a", given)
    assert rate(match, {"alice": 1000, "bob": 1000}).new_ratings == {"alice": 1020, "bob": 980}


def test_fast_path_counts_a_player_missing_from_games_played_as_zero() -> None:
    """games_played without bob: he has played 0 games (rate()'s contract), alice keeps her 3."""
    result = rate(Match.single("alice", "bob", "a"), {"alice": 1000, "bob": 1000}, games_played={"alice": 3})
    assert result.new_ratings == {"alice": 1020, "bob": 980}
    assert (result["alice"].games_played, result["bob"].games_played) == (3, 0)


def test_fast_path_result_names_the_rules_used() -> None:
    """A one-against-one result carries the label name@version of the rules it was rated under."""
    rules = ODD_K.replace(name="club-rules", version="7")
    assert (
        rate(Match.single("alice", "bob", "a"), {"alice": 1000, "bob": 1000}, rules).rules_label
        == "club-rules@7"
    )
