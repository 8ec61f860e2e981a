"""The HTML report."""

from __future__ import annotations

import pytest

from sedma_elo.analysis.report import render_report
from sedma_elo.errors import ValidationError

RUN = {
    "kind": "backtest",
    "history": "h.csv",
    "split": {"n": 10, "valid_start": 5, "test_start": 7},
    "systems": [
        {
            "system": "elo<k>",
            "log_loss": 0.6,
            "brier": 0.2,
            "accuracy": 0.7,
            "valid": None,
            "seconds": 1.0,
            "drift": None,
            "calibration": [{"mean_predicted": 0.4, "mean_observed": 0.5}],
        }
    ],
}


def test_report_is_self_contained_html() -> None:
    """The page embeds its plot as a data URI and escapes system names."""
    page = render_report([RUN])
    assert page.startswith("<!DOCTYPE html>")
    assert "data:image/png;base64," in page
    assert "elo&lt;k&gt;" in page


def test_report_refuses_unknown_kind() -> None:
    """A run of an unknown kind is named by its index."""
    with pytest.raises(ValidationError, match=r"runs\[0\]\.kind"):
        render_report([{"kind": "other"}])


def _backtest(history: str) -> dict:  # type: ignore[type-arg]
    run = {**RUN, "history": history}
    run["systems"] = [
        {
            **RUN["systems"][0],
            "drift": {
                "mean_start": 1500.0,
                "mean_end": 1499.25,
                "players_start": 3,
                "players_end": 4,
                "above_initial": 1,
                "below_initial": 2,
                "gained": 1,
                "lost": 2,
            },
        },
        {
            **RUN["systems"][0],
            "system": "sedma x",
            "vs_reference": {"mean": -0.01, "low": -0.02, "high": 0.0, "resamples": 10, "level": 0.95},
            "fairness": {
                "drift_per_100k": 0.0,
                "losing_well": 3,
                "win_gain": 20,
                "convergence_median": 9.0,
                "newcomers": 4,
                "tolerance": 50.0,
            },
        },
    ]
    return run


def test_two_backtests_get_distinct_headings() -> None:
    """Two backtests of one history are numbered, so their headings differ."""
    page = render_report([_backtest("h.csv"), _backtest("h.csv")])
    assert "<h2>Backtest 1: h.csv" in page and "<h2>Backtest 2: h.csv" in page


def test_integral_figures_print_as_integers() -> None:
    """A mean rating of 1500.0 prints as 1500, not 1500.0000; a rating of 1499.25 to one place."""
    page = render_report([_backtest("h.csv")])
    assert "<td>1500</td>" in page and "1500.0000" not in page
    assert "<td>1499.2</td>" in page


def test_candidates_show_interval_and_fairness() -> None:
    """A candidate rule set's row shows its difference with its interval and its losing-well gain."""
    page = render_report([_backtest("h.csv")])
    assert "-0.0100 [-0.0200, +0.0000]" in page
    assert "candidate rule sets" in page


def test_tuning_run_shows_its_front() -> None:
    """A tuning run renders its Pareto front as a table and a plot, the chosen trial marked."""
    row = {
        "trial": 4,
        "valid_log_loss": 0.57,
        "drift_per_100k": 0.5,
        "losing_well": 2,
        "convergence_median": 9.0,
        "params": {},
    }
    run = {
        "kind": "tune",
        "history": "h.csv",
        "rules": "t.toml",
        "constraints": {"max_drift": 1.0, "max_losing_well": 5.0},
        "trials": 10,
        "feasible": 3,
        "chosen": row,
        "front": [row],
        "all_trials": [
            {**row, "feasible": True},
            {**row, "trial": 5, "drift_per_100k": 30.0, "feasible": False},
        ],
        "test": {"tuned rules": {"log_loss": 0.55}},
    }
    page = render_report([run])
    assert "<h2>Tuning 1: h.csv" in page and "chosen" in page and "|drift| &lt;= 1" in page
    assert page.count("data:image/png;base64,") == 1


def test_players_interval_and_era_drifts_are_shown() -> None:
    """A run with players-resampled intervals and era drifts gets a column for each."""
    run = _backtest("h.csv")
    second = run["systems"][1]
    second["vs_reference_players"] = {**second["vs_reference"], "low": -0.05, "high": 0.03, "unit": "player"}
    second["fairness"] = {**second["fairness"], "segment_drifts": [1.5, -0.25]}
    page = render_report([run])
    assert "players resampled [95% CI]" in page and "-0.0100 [-0.0500, +0.0300]" in page
    assert "+1.50 / -0.25" in page


def test_later_slice_table_is_shown() -> None:
    """A run with a later slice (``tail``) gets a table of it, naming its matches and its systems."""
    run = _backtest("h.csv")
    tail_system = {**run["systems"][1], "system": "kickscore; last 2 matches only", "log_loss": 0.5123}
    run["tail"] = {"split": {"n": 10, "valid_start": 5, "test_start": 8}, "systems": [tail_system]}
    page = render_report([run])
    assert "later slice, last 2 matches" in page and "from match 8" in page
    assert "kickscore; last 2 matches only" in page and "<td>0.5123</td>" in page
    later = page[page.index("later slice, last 2 matches") :]
    assert "valid log loss" not in later[: later.index("</table>")]


def test_run_without_later_slice_has_no_such_table() -> None:
    """A run without ``tail`` shows no later-slice table."""
    assert "later slice" not in render_report([_backtest("h.csv")])
