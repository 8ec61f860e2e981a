"""Fairness measures: drift of the pool, losing well, newcomer convergence."""

from __future__ import annotations

import numpy as np
import pytest

from sedma_elo import REFERENCE_RULES
from sedma_elo.analysis.fairness import (
    drift_components,
    drift_per_100k,
    fairness_of,
    losing_well_gain,
    newcomer_convergence,
    segment_drifts,
)
from sedma_elo.analysis.forecast import Forecast
from sedma_elo.analysis.metrics import chronological_split
from sedma_elo.analysis.sedma import sedma_rules
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.core.rules import BonusRule
from sedma_elo.errors import ValidationError


def test_zero_sum_rules_do_not_drift(small_history) -> None:  # type: ignore[no-untyped-def]
    """A zero-sum rule set without a floor keeps the pool's mean rating: drift exactly 0."""
    t = table_from_matches(small_history)
    rules = REFERENCE_RULES.replace(zero_sum=True)
    fc = sedma_rules(rules)(t, chronological_split(len(t)))
    assert drift_per_100k(t, fc) == 0.0


def test_drift_is_mean_change_scaled_to_100k_matches(small_history) -> None:  # type: ignore[no-untyped-def]
    """Drift = (mean final rating of everyone seen - initial) / matches * 100,000."""
    t = table_from_matches(small_history)
    final = np.full(t.n_players, 1000.0)
    final[0] += 60.0  # one player of 30 gained 60 points over 600 matches: mean +2, i.e. +333.3 per 100k
    fc = Forecast("x", np.full(len(t), 0.5), np.zeros(len(t)), np.zeros(len(t)), final, 1000.0)
    assert drift_per_100k(t, fc) == 60.0 / t.n_players / len(t) * 100_000


def test_losing_well_counts_rounds_even_without_a_bonus() -> None:
    """Rules that pay no bonus but weigh the loser's 24ers in the margin still show a losing-well gain."""
    none = BonusRule(0.0, 0.0)
    plain = REFERENCE_RULES.replace(bonus_16=none, bonus_24=none, bonus_4_and_last=none)
    assert losing_well_gain(plain)[0] == 0
    margin = plain.replace(margin_scale=0.2, margin_weight_24=1.0)
    assert losing_well_gain(margin)[0] > 0


def test_convergence_counts_matches_until_within_tolerance() -> None:
    """Player 0 needs 2 appearances to come within 10 of their settled 100; player 1 is never close."""
    who = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    rating = np.array([0.0, 0.0, 50.0, 0.0, 95.0, 0.0, 100.0, 0.0, 100.0, 500.0, 100.0, 500.0])
    # player 1 settles at 500 (mean of the last two), reached only at appearance 4: counts 4, not 6
    assert newcomer_convergence(who, rating, [0, 1], tolerance=10.0) == [2, 4]


def test_convergence_leaves_out_players_with_nowhere_to_go() -> None:
    """With min_distance, a newcomer who settles where they entered is not counted."""
    who = np.repeat(np.array([0, 1]), 6)
    rating = np.array([0.0] * 6 + [0.0, 50.0, 100.0, 150.0, 150.0, 150.0])
    # player 0 stays at 0 (left out); player 1 settles at 150, first within 10 of it at appearance 3
    assert newcomer_convergence(who, rating, [0, 1], tolerance=10.0, min_distance=10.0) == [3]


def test_fairness_of_a_replay(small_history) -> None:  # type: ignore[no-untyped-def]
    """fairness_of gives the losing-well figures of the rules and the drift of the replay."""
    t = table_from_matches(small_history)
    fc = sedma_rules()(t, chronological_split(len(t)))
    f = fairness_of(t, fc, REFERENCE_RULES)
    assert (f.losing_well, f.win_gain) == losing_well_gain(REFERENCE_RULES)
    assert f.drift_per_100k == drift_per_100k(t, fc)


def test_segment_drifts_average_to_the_whole_drift(small_history) -> None:  # type: ignore[no-untyped-def]
    """The drifts of 4 equal eras of an inflating replay average to its whole drift, and differ."""
    t = table_from_matches(small_history)
    rules = REFERENCE_RULES.replace(score_max=1.5, bonus_16=BonusRule(0.2, 0.5))
    fc = sedma_rules(rules)(t, chronological_split(len(t)))
    eras = segment_drifts(t, fc, 4)
    assert len(eras) == 4 and len(set(eras)) > 1
    assert np.mean(eras) == pytest.approx(drift_per_100k(t, fc), rel=1e-6)


def test_segment_drifts_of_zero_sum_rules_are_zero(small_history) -> None:  # type: ignore[no-untyped-def]
    """Zero-sum rules create no points in any era; a segment count out of range is refused by name."""
    t = table_from_matches(small_history)
    fc = sedma_rules(REFERENCE_RULES.replace(zero_sum=True))(t, chronological_split(len(t)))
    assert segment_drifts(t, fc, 3) == [0.0, 0.0, 0.0]
    assert fairness_of(t, fc, REFERENCE_RULES, segments=3).segment_drifts == (0.0, 0.0, 0.0)
    with pytest.raises(ValidationError, match="drift_segments"):
        segment_drifts(t, fc, 0)


def test_drift_components_add_up_to_the_drift(small_history) -> None:  # type: ignore[no-untyped-def]
    """Established players' matches and newcomers' matches split the drift; a newcomer-free cut takes all."""
    t = table_from_matches(small_history)
    rules = REFERENCE_RULES.replace(score_max=1.5, bonus_16=BonusRule(0.2, 0.5))
    fc = sedma_rules(rules)(t, chronological_split(len(t)))
    established, newcomers = drift_components(t, fc, 10)
    assert established != 0.0 and newcomers != 0.0
    assert established + newcomers == pytest.approx(drift_per_100k(t, fc), rel=1e-6)
    assert drift_components(t, fc, 0) == (pytest.approx(drift_per_100k(t, fc), rel=1e-6), 0.0)
