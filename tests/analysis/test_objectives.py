"""Objectives of the tuner: Pareto front, constraints, the chosen trial."""

from __future__ import annotations

import math

import pytest

from sedma_elo import REFERENCE_RULES
from sedma_elo.analysis.fairness import Fairness
from sedma_elo.analysis.metrics import chronological_split
from sedma_elo.analysis.objectives import Constraints, TrialMeasures, front_rows, pareto_front
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.analysis.tune import tune_rules
from sedma_elo.errors import ValidationError


def _m(loss: float, drift: float, losing_well: int, conv: float = 5.0) -> TrialMeasures:
    return TrialMeasures(loss, Fairness(drift, losing_well, 20, conv, 10, 50.0))


def test_pareto_front_keeps_only_undominated_points() -> None:
    """(1, 3) and (2, 1) trade off; (2, 3) is dominated by both; a duplicate of a front point stays."""
    assert pareto_front([(1, 3), (2, 1), (2, 3), (1, 3)]) == [0, 1, 3]


def test_constraints_bound_the_signed_figures() -> None:
    """|drift| and the signed losing-well gain are bounded; a very negative losing well is fine."""
    c = Constraints(max_drift=1.0, max_losing_well=5.0)
    assert c.violations(_m(0.5, -0.5, 5).fairness) == [-0.5, 0.0]
    assert c.met(_m(0.5, 0.9, -30).fairness)
    assert not c.met(_m(0.5, -1.5, 0).fairness)
    assert not c.met(_m(0.5, 0.0, 6).fairness)
    assert not c.met(_m(0.5, math.nan, 0).fairness)


def test_front_rows_are_feasible_and_sorted_by_log_loss() -> None:
    """Infeasible trials never enter the front; the rows come best log loss first."""
    measured = [
        (0, _m(0.60, 0.0, 0), {"k": 1.0}),
        (1, _m(0.50, 9.0, 0), {"k": 2.0}),  # best loss but drifts
        (2, _m(0.55, 0.5, 3), {"k": 3.0}),
        (3, _m(0.58, 0.2, 4), {"k": 4.0}),  # dominated by 2 except drift: stays
    ]
    rows = front_rows(measured, Constraints(max_drift=1.0))
    assert [r["trial"] for r in rows] == [2, 3, 0]
    assert rows[0]["params"] == {"k": 3.0}


def test_objective_values_are_absolute_and_finite() -> None:
    """The minimised values are |drift| and |losing well|; a NaN convergence becomes inf."""
    assert _m(0.5, -2.0, -7, math.nan).values() == (0.5, 2.0, 7.0, math.inf)


def test_chosen_rules_meet_the_constraints(small_history) -> None:  # type: ignore[no-untyped-def]
    """From zero-sum rules with a drift bound, the chosen trial drifts at most that much."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    base = REFERENCE_RULES.replace(zero_sum=True)
    bounds = Constraints(max_drift=0.5, max_losing_well=5.0)
    result = tune_rules(t, split, trials=6, seed=2, base=base, constraints=bounds)
    assert bounds.met(result.measures.fairness)
    assert result.feasible >= 1
    assert all(
        bounds.met(_m(r["valid_log_loss"], r["drift_per_100k"], r["losing_well"]).fairness)
        for r in result.front
    )
    assert result.number in [r["trial"] for r in result.everything]


def test_no_feasible_trial_is_an_error(small_history) -> None:  # type: ignore[no-untyped-def]
    """Bounds no trial can meet give a clear error naming the constraints."""
    t = table_from_matches(small_history)
    with pytest.raises(ValidationError, match="constraints"):
        tune_rules(t, chronological_split(len(t)), trials=2, constraints=Constraints(max_losing_well=-1000.0))


def test_drift_segments_bound_every_era() -> None:
    """With drift_segments the drift bound applies to the worst era too, not only to the whole replay."""
    balanced = Fairness(0.2, 0, 20, 5.0, 10, 50.0, (1.5, -1.1, 0.3, 0.1))
    assert Constraints(max_drift=1.0).met(balanced)
    assert not Constraints(max_drift=1.0, drift_segments=4).met(balanced)
    assert Constraints(max_drift=1.0, drift_segments=4).violations(balanced) == [pytest.approx(0.5)]
