"""The tables ``sedma-elo backtest`` prints: the systems on the test window and the first's details."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # the analysis package is imported by its commands only (CLI start-up)
    from ..analysis import Split, SystemResult
    from ..analysis.metrics import Difference

__all__ = ["interval", "metrics_table", "print_details"]


def metrics_table(results: list[SystemResult], split: Split) -> Table:
    """The test-window table of ``results``: log loss, the difference from the first with its
    interval (and the players-resampled one when any result has it), Brier, accuracy, seconds."""
    t = Table(title=f"Test window: last {split.n_test} of {split.n} matches")
    by_players = any(r.vs_reference_players is not None for r in results)
    cols = ["system", "log loss", "vs first [95% CI]", "Brier", "accuracy", "valid log loss", "seconds"]
    if by_players:
        cols.insert(3, "players resampled [95% CI]")
    for col in cols:
        t.add_column(col, justify="left" if col == "system" else "right")
    for r in results:
        acc = "-" if r.test.accuracy is None else f"{r.test.accuracy:.4f}"
        valid = "-" if r.valid is None else f"{r.valid.log_loss:.4f}"
        cells = [r.system, f"{r.test.log_loss:.4f}", interval(r.vs_reference)]
        if by_players:
            cells.append(interval(r.vs_reference_players))
        t.add_row(*cells, f"{r.test.brier:.4f}", acc, valid, f"{r.seconds:.1f}")
    return t


def interval(d: Difference | None) -> str:
    """``mean [low, high]`` with signs, or ``-`` for none (the reference row)."""
    return "-" if d is None else f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]"


def print_details(console: Console, result: SystemResult) -> None:
    """Print ``result``'s calibration table and its rating drift over the test window."""
    cal = Table(title=f"Calibration on the test window: {result.system}")
    for col in ("forecast bin", "matches", "mean forecast", "observed"):
        cal.add_column(col, justify="right")
    for b in result.test.calibration:
        cal.add_row(
            f"[{b.low:.1f}, {b.high:.1f})", str(b.count), f"{b.mean_predicted:.3f}", f"{b.mean_observed:.3f}"
        )
    console.print(cal)
    d = result.drift
    if d is not None:
        console.print(
            f"Rating drift over the test window: mean {d.mean_start:.1f} -> {d.mean_end:.1f} "
            f"({d.players_start} -> {d.players_end} players); at the end {d.above_initial} players are above "
            f"and {d.below_initial} below the initial rating; of those rated at the start, {d.gained} ended "
            f"higher and {d.lost} lower."
        )
