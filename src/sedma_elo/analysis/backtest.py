"""The backtest protocol: chronological, predict each match before updating, score the test window.

Every system runs over the *whole* history (so ratings are warm when the test window starts) and
is scored on the same matches, the last ``test_fraction`` of the history (30% by default).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .forecast import Drift, Forecast, Forecaster, rating_drift
from .metrics import Difference, Metrics, Split, paired_bootstrap, player_bootstrap, score_forecasts
from .table import MatchTable

__all__ = ["SystemResult", "backtest", "results_to_json"]


@dataclass(frozen=True, eq=False)
class SystemResult:
    """One system's scores on one split.

    Attributes:
        forecast: the system's per-match forecasts over the whole history.
        test: metrics over the test window (the published figures).
        valid: metrics over the validation window, ``None`` when the split has none.
        drift: rating drift over the test window, ``None`` for systems without ratings.
        seconds: wall time of the run (replay plus any tuning).
        vs_reference: test log loss minus the first system's, with a paired bootstrap interval
            (``None`` for the first system itself).
        vs_reference_players: the same difference with a player-cluster bootstrap interval
            (:func:`~sedma_elo.analysis.metrics.player_bootstrap`), when asked for.
        extra: more figures for the JSON (e.g. a rule set's fairness), added by the caller.
    """

    forecast: Forecast
    test: Metrics
    valid: Metrics | None
    drift: Drift | None
    seconds: float
    vs_reference: Difference | None = None
    vs_reference_players: Difference | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def system(self) -> str:
        """The system's name."""
        return self.forecast.system

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: the test metrics at the top level, plus the rest."""
        out: dict[str, Any] = {"system": self.system, **self.test.to_dict()}
        out["valid"] = (
            None
            if self.valid is None
            else {k: v for k, v in self.valid.to_dict().items() if k != "calibration"}
        )
        out["drift"] = None if self.drift is None else asdict(self.drift)
        out["params"] = dict(self.forecast.params)
        out["seconds"] = round(self.seconds, 3)
        out["vs_reference"] = None if self.vs_reference is None else self.vs_reference.to_dict()
        players = self.vs_reference_players
        out["vs_reference_players"] = None if players is None else players.to_dict()
        out.update(self.extra)
        return out


def backtest(
    table: MatchTable,
    forecasters: Sequence[Forecaster],
    split: Split,
    *,
    progress: Callable[[int], None] | None = None,
    resamples: int = 1000,
    block: int = 1,
    players: bool = False,
) -> list[SystemResult]:
    """Run each forecaster over ``table`` and score it on ``split``'s windows.

    The first forecaster is the reference: every other system's test log loss is compared with
    it by :func:`paired_bootstrap` (``resamples`` resamples, 95%, runs of ``block`` consecutive
    matches; 1 draws matches independently) and, with ``players``, also by
    :func:`player_bootstrap` (players resampled, their matches kept together). ``progress`` is called with the
    index of each system as it starts (for a progress display).

    Raises:
        ValidationError: from the forecasters or the metrics (e.g. a forecast outside [0, 1]).
    """
    results: list[SystemResult] = []
    test = slice(split.test_start, split.n)
    valid = slice(split.valid_start, split.test_start)
    for i, forecaster in enumerate(forecasters):
        if progress is not None:
            progress(i)
        start = time.perf_counter()
        fc = forecaster(table, split)
        seconds = time.perf_counter() - start
        test_metrics = score_forecasts(fc.p[test], table.y[test])
        valid_metrics = score_forecasts(fc.p[valid], table.y[valid]) if split.n_valid else None
        diff = (
            paired_bootstrap(
                fc.p[test], results[0].forecast.p[test], table.y[test], resamples=resamples, block=block
            )
            if results
            else None
        )
        by_player = (
            player_bootstrap(
                fc.p[test],
                results[0].forecast.p[test],
                table.y[test],
                table.a[test],
                table.b[test],
                resamples=resamples,
            )
            if results and players
            else None
        )
        drift = rating_drift(table, fc, split)
        results.append(SystemResult(fc, test_metrics, valid_metrics, drift, seconds, diff, by_player))
    return results


def results_to_json(results: Sequence[SystemResult], split: Split) -> dict[str, Any]:
    """One JSON object: the first system's test metrics at the top level, every system under ``systems``."""
    first = results[0].to_dict()
    return {
        **first,
        "split": {"n": split.n, "valid_start": split.valid_start, "test_start": split.test_start},
        "systems": [r.to_dict() for r in results],
    }
