"""What ``sedma-elo tune`` minimises for each trial, its constraints, and the Pareto front.

A trial replays only the matches before the test window (:meth:`MatchTable.head`), once, and
reads four figures from that replay and from the rules (all minimised):

1. ``valid_log_loss``: log loss of the plain expected score on the validation window;
2. ``abs_drift``: |change of the pool's mean rating per 100,000 matches| over the replay;
3. ``abs_losing_well``: |the "losing well" gain| (a good loss should cost neither much less nor
   much more than a plain one);
4. ``convergence``: median matches a newcomer needs to come within 50 points of where they settle.

Constraints (optuna's ``constraints_func``: a value <= 0 is met) bound the signed figures:
``|drift| <= max_drift`` and ``losing_well <= max_losing_well``. With ``drift_segments`` N above
1 the drift bound holds for the whole replay *and* for each of its N eras
(:func:`~sedma_elo.analysis.fairness.segment_drifts`): a rule set whose inflation and deflation
cancel only on average over one history is refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..core.rules import Rules
from .fairness import Fairness, fairness_of
from .forecast import Forecast, Forecaster
from .metrics import Split, score_forecasts
from .table import MatchTable

__all__ = [
    "OBJECTIVES",
    "Constraints",
    "TrialMeasures",
    "pareto_front",
    "replay_head",
    "trial_measures",
]

#: Names of the minimised objectives, in the order optuna sees them.
OBJECTIVES = ("valid_log_loss", "abs_drift", "abs_losing_well", "convergence")


@dataclass(frozen=True, slots=True)
class TrialMeasures:
    """The figures of one trial (see the module docstring); ``fairness`` holds the signed ones."""

    valid_log_loss: float
    fairness: Fairness

    def values(self) -> tuple[float, float, float, float]:
        """The objective values in :data:`OBJECTIVES` order (non-finite values become ``inf``)."""
        f = self.fairness
        raw = (self.valid_log_loss, abs(f.drift_per_100k), float(abs(f.losing_well)), f.convergence_median)
        return tuple(v if math.isfinite(v) else math.inf for v in raw)  # type: ignore[return-value]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping: the log loss and every fairness figure."""
        return {"valid_log_loss": self.valid_log_loss, **self.fairness.to_dict()}


@dataclass(frozen=True, slots=True)
class Constraints:
    """Bounds a chosen rule set must meet (``None``: no bound).

    Attributes:
        max_drift: largest allowed |drift per 100,000 matches|, in rating points.
        max_losing_well: largest allowed losing-well gain, in rating points.
        drift_segments: eras of the replay the drift bound must also hold in (1: the whole only).
    """

    max_drift: float | None = None
    max_losing_well: float | None = None
    drift_segments: int = 1

    @property
    def active(self) -> bool:
        """Whether any bound is set."""
        return self.max_drift is not None or self.max_losing_well is not None

    def names(self) -> list[str]:
        """Names of the bounds that are set, in the order of :meth:`violations`."""
        return [
            n for n, v in (("drift", self.max_drift), ("losing_well", self.max_losing_well)) if v is not None
        ]

    def violations(self, fairness: Fairness) -> list[float]:
        """optuna's constraint values: one per bound, feasible when every one is <= 0."""
        out = []
        if self.max_drift is not None:
            drift = fairness.worst_drift if self.drift_segments > 1 else abs(fairness.drift_per_100k)
            out.append(drift - self.max_drift if math.isfinite(drift) else math.inf)
        if self.max_losing_well is not None:
            out.append(fairness.losing_well - self.max_losing_well)
        return out

    def met(self, fairness: Fairness) -> bool:
        """Whether ``fairness`` meets every bound."""
        return all(v <= 0 for v in self.violations(fairness))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return asdict(self)


def replay_head(table: MatchTable, split: Split, forecaster: Forecaster) -> tuple[MatchTable, Forecast]:
    """The matches before the test window and ``forecaster``'s replay of them (the test window unseen)."""
    head = table.head(split.test_start)
    return head, forecaster(head, split)


def trial_measures(
    table: MatchTable, split: Split, rules: Rules, forecaster: Forecaster, *, segments: int = 1
) -> TrialMeasures:
    """Every figure of one trial from one replay of the matches before the test window.

    ``segments`` above 1 adds the drift of that many eras of the replay.
    """
    head, fc = replay_head(table, split, forecaster)
    window = slice(split.valid_start, split.test_start)
    loss = score_forecasts(fc.p[window], head.y[window]).log_loss
    return TrialMeasures(loss, fairness_of(head, fc, rules, segments=segments))


def pareto_front(points: Sequence[Sequence[float]]) -> list[int]:
    """Indexes of the points no other point dominates (all coordinates minimised), in input order.

    A point dominates another when it is no worse in every coordinate and better in one; equal
    points are all kept.
    """
    if not points:
        return []
    x = np.asarray(points, dtype=np.float64)
    keep = []
    for i in range(len(x)):
        no_worse = np.all(x <= x[i], axis=1)
        better = np.any(x < x[i], axis=1)
        if not np.any(no_worse & better):
            keep.append(i)
    return keep


def front_rows(
    measured: Iterable[tuple[int, TrialMeasures, Mapping[str, float | str]]], constraints: Constraints
) -> list[dict[str, Any]]:
    """The Pareto front among the trials that meet ``constraints``, best log loss first, as JSON rows."""
    ok = [(n, m, p) for n, m, p in measured if constraints.met(m.fairness)]
    front = [ok[i] for i in pareto_front([m.values() for _, m, _ in ok])]
    front.sort(key=lambda row: (row[1].valid_log_loss, row[0]))
    return [{"trial": n, **m.to_dict(), "params": dict(p)} for n, m, p in front]
