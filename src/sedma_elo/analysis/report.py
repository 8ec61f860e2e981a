"""One self-contained HTML page from saved runs (plots embedded as base64 PNG): the designers' page.

A *run* is the JSON object ``sedma-elo backtest --save``, ``sedma-elo tune`` (its ``--front``
file) or ``sedma-elo simulate --save`` writes: ``{"kind": "backtest" | "tune" | "simulate", ...}``.
For each candidate rule set the page shows prediction (test log loss and its difference from the
reference with a paired bootstrap interval), drift, losing-well gain and newcomer convergence;
for a tuning run its Pareto front as a table and a plot. Every section has its own numbered
heading, so two runs of one kind never look alike.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ValidationError
from .plots import calibration_png, distribution_png, pareto_png

__all__ = ["render_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: bold; }
img { max-width: 100%; }
"""


def _fmt(value: Any, digits: int = 4) -> str:
    """A table cell: integers (and integral floats) as integers, ratings to 0.1, small figures to 4 places."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.{digits}f}"
    return html.escape(str(value))


def _diff(d: Mapping[str, Any] | None) -> str:
    if not d:
        return "reference"
    return f"{d['mean']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"


def _eras(values: Sequence[float] | None) -> str:
    return " / ".join(f"{v:+.2f}" for v in values) if values else "-"


def _table(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><caption>{html.escape(caption)}</caption><tr>{head}</tr>{body}</table>"


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _systems_table(caption: str, systems: Sequence[Mapping[str, Any]], valid: bool = True) -> str:
    """Every system's log loss, difference from the first [interval] (players-resampled too when
    any system has it), Brier, accuracy, validation log loss (unless not ``valid``) and seconds."""
    by_players = any(s.get("vs_reference_players") for s in systems)
    return _table(
        caption,
        ["system", "log loss", "vs reference [95% CI]"]
        + (["players resampled [95% CI]"] if by_players else [])
        + ["Brier", "accuracy"]
        + (["valid log loss"] if valid else [])
        + ["seconds"],
        [
            [s["system"], s["log_loss"], _diff(s.get("vs_reference"))]
            + ([_diff(s.get("vs_reference_players"))] if by_players else [])
            + [s["brier"], s["accuracy"]]
            + ([(s.get("valid") or {}).get("log_loss")] if valid else [])
            + [s.get("seconds")]
            for s in systems
        ],
    )


def _later_slice(tail: Mapping[str, Any], n: int, number: int) -> str:
    """The table of a run's later slice: every system scored on the last matches only.

    ``tail`` is ``results_to_json`` of the slice (``split.test_start`` = its first scored match):
    what ``benchmarks/analysis_peers_atp.py merge`` writes when a peer ran on the last matches only.
    """
    start = int(tail["split"]["test_start"])
    return "\n".join(
        [
            f"<p>Later slice: the last {n - start} matches (from match {start}), every system scored on "
            "them, including the peers that ran on the last matches only (after a warm-up inside the "
            "test window, so their figure is an upper bound on their log loss).</p>",
            # No validation column: before the slice a tail-only peer's forecasts are 0.5.
            _systems_table(
                f"Backtest {number}: later slice, last {n - start} matches", tail["systems"], valid=False
            ),
        ]
    )


def _backtest_section(run: Mapping[str, Any], number: int) -> str:
    systems = run["systems"]
    split = run["split"]
    by_players = any(s.get("vs_reference_players") for s in systems)
    parts = [
        f"<h2>Backtest {number}: {html.escape(str(run.get('history', '')))}, "
        f"reference {html.escape(str(systems[0]['system']))}</h2>",
        f"<p>{split['n']} matches; validation window [{split['valid_start']}, {split['test_start']}), "
        f"test window [{split['test_start']}, {split['n']}) ({split['n'] - split['test_start']} matches). "
        "Every match is predicted from the ratings before it; log loss clips p to [1e-15, 1-1e-15]; "
        "draws count 0.5 in log loss and Brier and are left out of accuracy. The difference from the "
        "reference (the first row) is the test log loss minus the reference's, with a 95% paired "
        "bootstrap interval over the test matches (negative: better than the reference)"
        + (
            "; the players-resampled interval draws players with replacement and keeps the matches "
            "between drawn players (a cluster bootstrap)"
            if by_players
            else ""
        )
        + ".</p>",
        _systems_table(f"Backtest {number}: test window", systems),
    ]
    if tail := run.get("tail"):
        parts.append(_later_slice(tail, split["n"], number))
    fair_rows = [
        [
            s["system"],
            s["log_loss"],
            _diff(s.get("vs_reference")),
            f["drift_per_100k"],
            _eras(f.get("segment_drifts")),
            f["losing_well"],
            f["win_gain"],
            f["convergence_median"],
            f["newcomers"],
        ]
        for s in systems
        if (f := s.get("fairness"))
    ]
    if fair_rows:
        parts.append(
            _table(
                f"Backtest {number}: candidate rule sets, prediction and fairness on this history",
                [
                    "rules",
                    "test log loss",
                    "vs reference [95% CI]",
                    "drift / 100k matches",
                    "drift by era (quarters)",
                    "losing well (+pts)",
                    "plain win (+pts)",
                    "newcomer convergence (median matches)",
                    "newcomers",
                ],
                fair_rows,
            )
        )
    drift_rows = [
        [
            s["system"],
            d["mean_start"],
            d["mean_end"],
            d["above_initial"],
            d["below_initial"],
            d["gained"],
            d["lost"],
        ]
        for s in systems
        if (d := s.get("drift"))
    ]
    if drift_rows:
        parts.append(
            _table(
                f"Backtest {number}: rating drift over the test window (each system's own scale)",
                [
                    "system",
                    "mean at start",
                    "mean at end",
                    "above initial",
                    "below initial",
                    "gained",
                    "lost",
                ],
                drift_rows,
            )
        )
    parts.append(_img(calibration_png(systems), f"backtest {number}: calibration, one panel per system"))
    if run.get("timeline"):
        parts.append(
            _img(distribution_png(run["timeline"], f"Ratings over time: {systems[0]['system']}"), "ratings")
        )
    return "\n".join(parts)


def _tune_section(run: Mapping[str, Any], number: int) -> str:
    bounds = run.get("constraints") or {}
    said = [f"|drift| <= {bounds['max_drift']:g}" for _ in [0] if bounds.get("max_drift") is not None]
    said += [
        f"losing well <= {bounds['max_losing_well']:g}"
        for _ in [0]
        if bounds.get("max_losing_well") is not None
    ]
    chosen = run["chosen"]
    test = run.get("test", {})
    rows = [
        [
            row["trial"],
            row["valid_log_loss"],
            row["drift_per_100k"],
            row["losing_well"],
            row["convergence_median"],
            "chosen" if row["trial"] == chosen["trial"] else "",
        ]
        for row in run["front"]
    ]
    return "\n".join(
        [
            f"<h2>Tuning {number}: {html.escape(str(run.get('history', '')))} &rarr; "
            f"{html.escape(str(run.get('rules', '')))}</h2>",
            f"<p>{run['trials']} trials, {run['feasible']} meeting the constraints "
            f"({html.escape(', '.join(said) or 'none')}). Chosen: trial {chosen['trial']}, the lowest "
            "validation log loss among those. Test window, scored once after the search: starting rules "
            f"{_fmt((test.get('starting rules') or {}).get('log_loss'))}, tuned "
            f"{_fmt((test.get('tuned rules') or {}).get('log_loss'))}; drift of the tuned rules over the "
            f"whole history {_fmt(run.get('full_history_drift_per_100k'))} points per 100k matches.</p>",
            _table(
                f"Tuning {number}: Pareto front (validation window)",
                ["trial", "valid log loss", "drift / 100k", "losing well", "convergence (median)", ""],
                rows,
            ),
            _img(
                pareto_png(run.get("all_trials") or run["front"], run["front"], chosen["trial"]),
                "Pareto front",
            ),
        ]
    )


def _simulate_section(run: Mapping[str, Any], number: int) -> str:
    league = run["league"]
    rows = [
        [
            r["rules"],
            r["spearman"],
            r["points_per_100k"],
            r["mean_drift_per_100k"],
            r["convergence_median"],
            r["convergence_p90"],
            r["losing_well"],
            r["win_gain"],
        ]
        for r in run["results"]
    ]
    return "\n".join(
        [
            f"<h2>Simulated league {number}: {league.get('players')} players, "
            f"{league.get('matches')} matches, seed {league.get('seed')}</h2>",
            "<p>" + html.escape(", ".join(f"{k}={v}" for k, v in league.items())) + "</p>",
            _table(
                f"Simulated league {number}: rule sets on the same simulated matches",
                [
                    "rules",
                    "Spearman vs true skill",
                    "points created / 100k matches",
                    "mean drift / 100k",
                    "newcomer convergence (median matches)",
                    "p90",
                    "losing well (+pts)",
                    "plain win (+pts)",
                ],
                rows,
            ),
        ]
    )


def render_report(runs: Sequence[Mapping[str, Any]], title: str = "sedma-elo analysis report") -> str:
    """The HTML page for ``runs`` (backtest, tune and simulate runs, in the given order).

    Sections of one kind are numbered in order (Backtest 1, Backtest 2, ...).

    Raises:
        ValidationError: no runs, or a run whose ``kind`` is not ``backtest``, ``tune`` or ``simulate``.
    """
    if not runs:
        raise ValidationError("runs", "give at least one saved backtest, tune or simulate run")
    renderers = {"backtest": _backtest_section, "tune": _tune_section, "simulate": _simulate_section}
    seen: dict[str, int] = {}
    sections = []
    for i, run in enumerate(runs):
        kind = run.get("kind") if isinstance(run, Mapping) else None
        if kind not in renderers:
            raise ValidationError(
                f"runs[{i}].kind", f"must be 'backtest', 'tune' or 'simulate', got {kind!r}"
            )
        seen[kind] = seen.get(kind, 0) + 1
        sections.append(renderers[kind](run, seen[kind]))
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>\n"
        + "\n".join(sections)
        + "</body></html>\n"
    )
