"""The simulated league and its measures."""

from __future__ import annotations

import pytest

from sedma_elo import REFERENCE_RULES, BonusRule
from sedma_elo.analysis.simulate import League, generate_matches, losing_well_gain, simulate_league, spearman
from sedma_elo.errors import ValidationError

SMALL = League(players=40, founders=30, matches=3000, seed=1)


def test_spearman_by_hand() -> None:
    """Ranks (1,2,3) against (1,3,2) correlate 0.5; ties take their average rank."""
    assert spearman([1, 2, 3], [10, 30, 20]) == pytest.approx(0.5)
    assert spearman([1, 1, 2], [1, 2, 3]) == pytest.approx(0.8660254, rel=1e-6)


def test_losing_well_reference_by_hand() -> None:
    """Reference rules at 1000 vs 1000 (K 40): capped bonuses 0.44 x 0.1 = 0.044 -> -18 instead of -20."""
    assert losing_well_gain(REFERENCE_RULES) == (2, 20)


def test_losing_well_zero_without_loser_bonus() -> None:
    """With loser_scale 0 a loss with bonuses gains nothing over a plain loss."""
    assert losing_well_gain(REFERENCE_RULES.replace(loser_bonus_scale=0.0))[0] == 0


def test_generator_is_reproducible() -> None:
    """The same seed gives the same matches."""
    a, _ = generate_matches(League(players=10, founders=5, matches=50, seed=4))
    b, _ = generate_matches(League(players=10, founders=5, matches=50, seed=4))
    assert a == b


def test_stronger_players_win_more() -> None:
    """In the generated league the stronger side wins most matches."""
    matches, skill = generate_matches(SMALL)
    stronger_won = sum(
        (skill[int(m.team_a[0][1:])] > skill[int(m.team_b[0][1:])]) == (m.winner == "a") for m in matches
    )
    assert stronger_won / len(matches) > 0.6


def test_ratings_track_skill() -> None:
    """After 3000 matches among 40 players the ratings rank players much like their true skill."""
    assert simulate_league(SMALL).spearman > 0.8


def test_bonus_only_rules_inflate() -> None:
    """Bonuses without any malus only add score, so rating points are created, not destroyed."""
    rules = REFERENCE_RULES.replace(name="bonus-only", malus_per_bad_move=0.0, bonus_16=BonusRule(0.1, 0.3))
    assert simulate_league(SMALL, rules).points_per_100k > 0


def test_bad_league_parameter_named() -> None:
    """A league with more founders than players is refused naming founders."""
    with pytest.raises(ValidationError, match="founders"):
        generate_matches(League(players=5, founders=6))


def test_losing_well_with_games_played_rules() -> None:
    """Rules with K from games played: K = 250 / (100 + 5)^0.4 for an established player, no bonus kept."""
    rules = REFERENCE_RULES.replace(k_mode="games", loser_bonus_scale=0.0)
    k = 250 / (100 + 5) ** 0.4
    assert losing_well_gain(rules) == (0, round(k * 0.5))
