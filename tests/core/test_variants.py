"""Rule variants: K by games played, zero-sum, rating floor, margin of victory (rules keys and rate)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo import REFERENCE_RULES, Match, PlayerStats, RulesError, ValidationError, rate, rules_from_toml
from sedma_elo.core.rules import K_MODES

R = REFERENCE_RULES


def _e(own: float, other: float) -> float:
    return 1 / (1 + 10 ** ((other - own) / 400))


def test_defaults_are_the_reference() -> None:
    """Every variant is off by default: no games needed, no margin, no zero-sum, no floor."""
    assert not R.uses_games_played and not R.uses_margin
    assert R.zero_sum is False and R.rating_floor is None


# ---------------------------------------------------------------------------- K by games played
def test_k_by_games_follows_the_curve() -> None:
    """mode=games: K = a / (games + b) ** c; a win at equal ratings moves K/2."""
    rules = R.replace(k_mode="games", k_games_a=250.0, k_games_b=5.0, k_games_c=0.4)
    result = rate(Match.single("x", "y", "a"), {}, rules, games_played={"x": 20, "y": 0})
    k_x, k_y = 250 / 25**0.4, 250 / 5**0.4
    assert result["x"].k == pytest.approx(k_x)
    assert result["x"].rating_after == round(1000 + k_x / 2)
    assert result["y"].rating_after == round(1000 - k_y / 2)
    assert result["x"].games_played == 20


def test_k_games_floor() -> None:
    """The curve never goes below games_min."""
    rules = R.replace(k_mode="games", k_games_a=100.0, k_games_b=1.0, k_games_c=1.0, k_games_min=12.0)
    assert rules.k_games(0) == 100.0
    assert rules.k_games(1000) == 12.0


@pytest.mark.parametrize(
    ("mode", "combine"),
    [
        ("sum", lambda t, g: t + g),
        ("product", lambda t, g: t * g),
        ("min", min),
        ("max", max),
    ],
)
def test_combination_modes(mode: str, combine: object) -> None:
    """sum/product/min/max combine the tier K (40 below 1200) with the games curve."""
    rules = R.replace(k_mode=mode, k_games_a=30.0, k_games_b=1.0, k_games_c=0.5)
    g = 30.0 / math.sqrt(4 + 1)
    assert rules.player_k(1000, 4) == pytest.approx(combine(40, g))  # type: ignore[operator]


def test_new_player_multiplier() -> None:
    """K is multiplied while a player has fewer than new_player_games games."""
    rules = R.replace(k_new_player_games=10, k_new_player_multiplier=1.5)
    assert rules.player_k(1000, 9) == 60.0
    assert rules.player_k(1000, 10) == 40
    result = rate(Match.single("x", "y", "a"), {}, rules, games_played={"x": 0, "y": 50})
    assert result["x"].rating_after == 1030 and result["y"].rating_after == 980
    assert "new player" in result["x"].k_reason


def test_games_played_required_when_used() -> None:
    """rate() refuses to guess games played when the rules need them."""
    with pytest.raises(ValidationError) as caught:
        rate(Match.single("x", "y", "a"), {}, R.replace(k_mode="games"))
    assert caught.value.field == "games_played"


def test_games_played_must_be_a_count() -> None:
    """A negative or non-integer games count names the player."""
    with pytest.raises(ValidationError) as caught:
        rate(Match.single("x", "y", "a"), {}, R, games_played={"x": -1})
    assert caught.value.field == "games_played.x"


# ---------------------------------------------------------------------------- zero-sum
def test_zero_sum_moves_points_between_players() -> None:
    """Zero-sum: one shared K (mean 36 of 40 and 32), one rounded transfer, the sum is kept."""
    rules = R.replace(zero_sum=True)
    result = rate(Match.single("x", "y", "a"), {"x": 1100, "y": 1300}, rules)
    transfer = round(36 * (1 - _e(1100, 1300)))
    assert result["x"].rating_after == 1100 + transfer
    assert result["y"].rating_after == 1300 - transfer
    assert result["x"].k == result["y"].k == 36.0
    assert any("zero-sum" in n for n in result["x"].notes)


def test_zero_sum_transfer_score_uses_both_players() -> None:
    """The transfer score is the mean of a's adjusted score and 1 - b's (loser bonus lowers it)."""
    rules = R.replace(zero_sum=True)
    stats_b = PlayerStats(won_by_24=2)  # loser bonus 0.1 * 0.2 = 0.02
    result = rate(Match.single("x", "y", "a", PlayerStats(), stats_b), {}, rules)
    s = (1.0 + (1 - 0.02)) / 2
    assert result["x"].rating_after == 1000 + round(40 * (s - 0.5))
    assert result["x"].delta == -result["y"].delta


@given(
    st.integers(0, 3000),
    st.integers(0, 3000),
    st.sampled_from(["a", "b", "draw"]),
    st.integers(0, 20),
    st.integers(0, 20),
)
def test_zero_sum_conserves_the_total(ra: int, rb: int, winner: str, bad_a: int, w16_b: int) -> None:
    """Whatever the counts, K tiers and outcome, the two ratings' sum is unchanged."""
    match = Match.single("x", "y", winner, PlayerStats(bad_moves=bad_a), PlayerStats(won_by_16=w16_b))  # type: ignore[arg-type]
    result = rate(match, {"x": ra, "y": rb}, R.replace(zero_sum=True))
    assert sum(c.rating_after for c in result.changes) == ra + rb


def test_zero_sum_established_transfers_between_established_players() -> None:
    """zero_sum_established: two players with new_player_games games each share one transfer."""
    rules = R.replace(zero_sum_established=True, k_new_player_games=3, k_new_player_multiplier=2.0)
    result = rate(Match.single("x", "y", "a"), {"x": 1100, "y": 1300}, rules, games_played={"x": 3, "y": 7})
    transfer = round(36 * (1 - _e(1100, 1300)))
    assert result["x"].rating_after == 1100 + transfer
    assert result["y"].rating_after == 1300 - transfer


def test_zero_sum_established_leaves_a_newcomers_match_per_player() -> None:
    """zero_sum_established: a match with a newcomer uses each player's own K (x2 for the newcomer)."""
    rules = R.replace(zero_sum_established=True, k_new_player_games=3, k_new_player_multiplier=2.0)
    result = rate(Match.single("x", "y", "a"), {"x": 1100, "y": 1300}, rules, games_played={"x": 2, "y": 7})
    assert result["x"].rating_after == 1100 + round(80 * (1 - _e(1100, 1300)))
    assert result["y"].rating_after == 1300 + round(32 * (0 - _e(1300, 1100)))


def test_zero_sum_established_without_newcomer_games_is_zero_sum() -> None:
    """With k_new_player_games = 0 every player is established: the same ratings as zero_sum."""
    match = Match.single("x", "y", "b", PlayerStats(won_by_16=2), PlayerStats(bad_moves=3))
    ratings = {"x": 1250, "y": 980}
    est = rate(match, ratings, R.replace(zero_sum_established=True))
    full = rate(match, ratings, R.replace(zero_sum=True))
    assert [c.rating_after for c in est.changes] == [c.rating_after for c in full.changes]


def test_zero_sum_newcomers_transfers_between_newcomers() -> None:
    """zero_sum_newcomers: two new players share one transfer with the mean of their fast K (x2)."""
    rules = R.replace(zero_sum_newcomers=True, k_new_player_games=3, k_new_player_multiplier=2.0)
    result = rate(Match.single("x", "y", "a"), {"x": 1100, "y": 1300}, rules, games_played={"x": 0, "y": 2})
    transfer = round((80 + 64) / 2 * (1 - _e(1100, 1300)))
    assert result["x"].rating_after == 1100 + transfer
    assert result["y"].rating_after == 1300 - transfer


def test_zero_sum_newcomers_leaves_a_newcomer_against_an_established_player_per_player() -> None:
    """zero_sum_newcomers with zero_sum_established: a newcomer's match with an established player
    is still rated per player."""
    rules = R.replace(
        zero_sum_established=True, zero_sum_newcomers=True, k_new_player_games=3, k_new_player_multiplier=2.0
    )
    result = rate(Match.single("x", "y", "a"), {"x": 1100, "y": 1300}, rules, games_played={"x": 2, "y": 7})
    assert result["x"].rating_after == 1100 + round(80 * (1 - _e(1100, 1300)))
    assert result["y"].rating_after == 1300 + round(32 * (0 - _e(1300, 1100)))


def test_zero_sum_newcomers_conserves_a_newcomers_team_match() -> None:
    """2 vs 2 of new players with winner bonuses above 1: the four ratings' sum is unchanged."""
    rules = R.replace(
        zero_sum_newcomers=True, k_new_player_games=5, k_new_player_multiplier=1.5, score_max=1.2
    )
    match = Match(("a1", "a2"), ("b1", "b2"), "a", {"a1": PlayerStats(won_by_24=3)})
    ratings = {"a1": 1000, "a2": 1040, "b1": 990, "b2": 1010}
    result = rate(match, ratings, rules, games_played=dict.fromkeys(ratings, 1))
    assert sum(c.rating_after for c in result.changes) == sum(ratings.values())
    assert "zero-sum" in result["a1"].notes[0]


NEWCOMER = R.replace(k_new_player_games=3, k_new_player_multiplier=2.0, newcomer_balance=1.0)


def test_newcomer_balance_takes_the_multipliers_extra_from_the_opponent() -> None:
    """newcomer_balance 1: the newcomer moves with x2, the opponent also gives back the extra half."""
    result = rate(
        Match.single("x", "y", "a"), {"x": 1100, "y": 1300}, NEWCOMER, games_played={"x": 2, "y": 7}
    )
    own_x = 80 * (1 - _e(1100, 1300))
    assert result["x"].rating_after == 1100 + round(own_x)
    assert result["y"].rating_after == 1300 + round(32 * (0 - _e(1300, 1100)) - own_x / 2)


def test_newcomer_balance_leaves_the_pairs_total_of_rules_without_multiplier() -> None:
    """newcomer_balance 1: the pair's unrounded total change is the one without the multiplier."""
    match = Match.single("x", "y", "b", PlayerStats(won_by_16=1), PlayerStats(won_by_24=2))
    ratings, games = {"x": 1150, "y": 1190}, {"x": 0, "y": 40}
    balanced = rate(match, ratings, NEWCOMER.replace(score_max=1.1), games_played=games)
    plain = rate(
        match, ratings, NEWCOMER.replace(score_max=1.1, k_new_player_multiplier=1.0), games_played=games
    )
    assert sum(c.change for c in balanced.changes) == pytest.approx(sum(c.change for c in plain.changes))
    assert "newcomer balance" in balanced["y"].notes[0]


def test_newcomer_balance_share_gives_back_that_share() -> None:
    """newcomer_balance 0.25: the opponent gives back a quarter of the newcomer's extra change."""
    rules = NEWCOMER.replace(newcomer_balance=0.25)
    result = rate(Match.single("x", "y", "b"), {"x": 1000, "y": 1000}, rules, games_played={"x": 0, "y": 9})
    assert result["y"].change == pytest.approx(40 * 0.5 - 0.25 * (80 * -0.5) / 2)


def test_newcomer_balance_splits_the_gift_among_the_opposing_team() -> None:
    """2 vs 2: each opponent of a newcomer gives back half of that newcomer's extra change."""
    match = Match(("a1", "a2"), ("b1", "b2"), "a", {})
    ratings = {"a1": 1000, "a2": 1000, "b1": 1000, "b2": 1000}
    games = {"a1": 0, "a2": 5, "b1": 5, "b2": 5}
    result = rate(match, ratings, NEWCOMER, games_played=games)
    assert result["a1"].change == pytest.approx(40.0)
    assert result["b1"].change == pytest.approx(-20.0 - 20.0 / 2)
    assert result["a2"].change == pytest.approx(20.0)


def test_newcomer_balance_is_off_in_a_transfer() -> None:
    """A match rated by the zero-sum transfer is already zero-sum: the balance changes nothing."""
    match = Match.single("x", "y", "a")
    ratings, games = {"x": 1100, "y": 1300}, {"x": 1, "y": 7}
    on = rate(match, ratings, NEWCOMER.replace(zero_sum=True), games_played=games)
    off = rate(match, ratings, NEWCOMER.replace(zero_sum=True, newcomer_balance=0.0), games_played=games)
    assert [c.rating_after for c in on.changes] == [c.rating_after for c in off.changes]


CURVE = NEWCOMER.replace(
    k_mode="max",
    k_games_a=400.0,
    k_games_b=1.0,
    k_games_c=1.0,
    k_games_min=0.0,
    newcomer_balance_games=True,
)  # K by games: max(tier 32 or 40, 400 / (games + 1)), x2 below 3 games: 400 at 1 game, 100 at 3


def test_newcomer_balance_games_takes_the_curves_extra_as_well() -> None:
    """newcomer_balance_games: the opponent gives back the newcomer's change above their K at 3 games."""
    result = rate(Match.single("x", "y", "a"), {"x": 1100, "y": 1300}, CURVE, games_played={"x": 1, "y": 7})
    own_x = 400.0 * (1 - _e(1100, 1300))
    own_y = 50.0 * (0 - _e(1300, 1100))
    assert result["x"].rating_after == 1100 + round(own_x)
    assert result["y"].rating_after == 1300 + round(own_y - own_x * (1 - 100.0 / 400.0))


def test_newcomer_balance_games_leaves_the_pair_the_settled_k() -> None:
    """newcomer_balance_games 1: the pair's total change is the one the newcomer's settled K would give."""
    match = Match.single("x", "y", "b", PlayerStats(won_by_16=1), PlayerStats(won_by_24=2))
    ratings, games = {"x": 1150, "y": 1190}, {"x": 1, "y": 40}
    rules = CURVE.replace(score_max=1.1)
    balanced = rate(match, ratings, rules, games_played=games)
    settled = rate(match, ratings, rules, games_played={"x": 3, "y": 40})
    assert sum(c.change for c in balanced.changes) == pytest.approx(sum(c.change for c in settled.changes))


def test_newcomer_balance_games_without_a_curve_is_the_multipliers_share() -> None:
    """K by rating only: the settled K is the K without the multiplier, so the flag changes nothing."""
    match = Match.single("x", "y", "a")
    ratings, games = {"x": 1100, "y": 1300}, {"x": 0, "y": 7}
    on = rate(match, ratings, NEWCOMER.replace(newcomer_balance_games=True), games_played=games)
    off = rate(match, ratings, NEWCOMER, games_played=games)
    assert [c.change for c in on.changes] == pytest.approx([c.change for c in off.changes])


def test_zero_sum_team_match_conserves_the_total() -> None:
    """In a 2-vs-2 zero-sum match every member of a side moves by the same amount."""
    match = Match(("a1", "a2"), ("b1", "b2"), "b", {})
    ratings = {"a1": 1000, "a2": 1400, "b1": 1100, "b2": 1250}
    result = rate(match, ratings, R.replace(zero_sum=True))
    deltas = [c.delta for c in result.changes]
    assert deltas[0] == deltas[1] == -deltas[2] == -deltas[3]
    assert sum(deltas) == 0


# ---------------------------------------------------------------------------- floor
def test_floor_stops_a_fall() -> None:
    """A rating that would end below the floor ends at the floor, and the note says so."""
    result = rate(Match.single("x", "y", "a"), {"x": 1000, "y": 1000}, R.replace(rating_floor=990))
    assert result["y"].rating_after == 990
    assert any("floor" in n for n in result["y"].notes)
    assert result["x"].rating_after == 1020


# ---------------------------------------------------------------------------- margin of victory
def test_margin_scales_k() -> None:
    """Winner's dominance 2 (one 24er) vs 0: K x (1 + 0.5 * 2) = 2, so +-40 instead of +-20."""
    rules = R.replace(margin_scale=0.5)
    match = Match.single("x", "y", "a", PlayerStats(won_by_24=1), PlayerStats())
    result = rate(match, {}, rules)
    assert (result["x"].rating_after, result["y"].rating_after) == (1040, 960)
    assert result["x"].k == 80.0


def test_margin_is_clamped_and_draws_are_neutral() -> None:
    """The multiplier is clamped to [min, max]; a draw has margin 0, so K is unchanged."""
    rules = R.replace(margin_scale=1.0, margin_max=1.5)
    assert rules.margin_multiplier(10.0) == 1.5
    assert rules.margin_multiplier(-10.0) == 0.0
    draw = rate(Match.single("x", "y", "draw", PlayerStats(won_by_16=3)), {}, rules)
    assert draw["x"].k == 40.0


# ---------------------------------------------------------------------------- TOML keys
def test_variant_keys_round_trip() -> None:
    """Every variant key survives to_toml / rules_from_toml."""
    rules = R.replace(
        k_mode="product",
        k_games_a=3.5,
        k_games_b=2.0,
        k_games_c=0.7,
        k_games_min=0.25,
        k_new_player_games=12,
        k_new_player_multiplier=1.25,
        zero_sum=True,
        rating_floor=800,
        margin_scale=0.1,
        margin_weight_16=0.5,
        margin_weight_24=1.5,
        margin_weight_4_and_last=-0.75,
        margin_weight_bad_moves=-0.1,
        margin_min=0.5,
        margin_max=2.0,
    )
    assert rules_from_toml(rules.to_toml()) == rules
    assert rules_from_toml(R.to_toml()) == R


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[k_factor]\nmode = 'often'", "k_factor.mode"),
        ("[k_factor]\ngames_b = 0", "k_factor.games_b"),
        ("[k_factor]\ngames_c = 9", "k_factor.games_c"),
        ("[k_factor]\nnew_player_games = 1.5", "k_factor.new_player_games"),
        ("[update]\nzero_sum = 1", "update.zero_sum"),
        ("[update]\nfloor = 1200", "update.floor"),
        ("[update]\nfloor = 'low'", "update.floor"),
        ("[update]\nceiling = 1", "update.ceiling"),
        ("[margin]\nmin = 2.0\nmax = 1.0", "margin.max"),
        ("[margin]\nweight_16 = true", "margin.weight_16"),
    ],
)
def test_bad_variant_key_is_named(toml: str, key: str) -> None:
    """An invalid variant value or unknown key raises RulesError naming the TOML key."""
    with pytest.raises(RulesError) as caught:
        rules_from_toml(toml)
    assert caught.value.field == key


def test_every_k_mode_is_accepted() -> None:
    """Each documented k_factor.mode reads from TOML."""
    for mode in K_MODES:
        assert rules_from_toml(f"[k_factor]\nmode = '{mode}'").k_mode == mode
