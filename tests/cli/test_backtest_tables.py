"""The tables `sedma-elo backtest` prints."""

from __future__ import annotations

import numpy as np
from rich.console import Console

from sedma_elo.analysis import backtest, chronological_split, elo, table_from_matches
from sedma_elo.analysis.metrics import Difference
from sedma_elo.cli.backtest_tables import interval, metrics_table, print_details
from sedma_elo.core.model import Match, PlayerStats


def _results(players: bool):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    names = ["ann", "bob", "cyd", "dan"]
    matches = []
    for _ in range(60):
        a, b = rng.choice(4, size=2, replace=False)
        matches.append(
            Match.single(names[a], names[b], "a" if rng.random() < 0.6 else "b", PlayerStats(), PlayerStats())
        )
    table = table_from_matches(matches)
    split = chronological_split(len(table))
    return backtest(table, [elo(32.0), elo(16.0)], split, players=players), split


def _text(renderable: object) -> str:
    console = Console(width=250, record=True)
    console.print(renderable)
    return console.export_text()


def test_interval_has_signs_and_a_dash_for_none() -> None:
    """A difference prints as 'mean [low, high]' with signs; none (the reference row) as '-'."""
    assert interval(Difference(-0.01, -0.02, 0.005, 10, 0.95)) == "-0.0100 [-0.0200, +0.0050]"
    assert interval(None) == "-"


def test_players_column_only_when_a_result_has_it() -> None:
    """The players-resampled column appears only for results that carry that interval."""
    with_players, split = _results(players=True)
    without, _ = _results(players=False)
    assert "players resampled" in _text(metrics_table(with_players, split))
    assert "players resampled" not in _text(metrics_table(without, split))


def test_details_show_calibration_and_drift() -> None:
    """The first system's details are its calibration table and a sentence on its rating drift."""
    results, _ = _results(players=False)
    console = Console(width=200, record=True)
    print_details(console, results[0])
    text = console.export_text()
    assert "Calibration on the test window: elo(k=32)" in text and "Rating drift over the test window" in text
