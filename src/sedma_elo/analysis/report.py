"""One self-contained HTML page from saved backtest and simulation runs (plots embedded as base64 PNG).

A *run* is the JSON object ``sedma-elo backtest --save`` or ``sedma-elo simulate --save`` writes:
``{"kind": "backtest", ...}`` or ``{"kind": "simulate", ...}``.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ValidationError
from .plots import calibration_png, distribution_png

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
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def _table(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><caption>{html.escape(caption)}</caption><tr>{head}</tr>{body}</table>"


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _backtest_section(run: Mapping[str, Any]) -> str:
    systems = run["systems"]
    split = run["split"]
    parts = [
        f"<h2>Backtest: {html.escape(str(run.get('history', '')))}</h2>",
        f"<p>{split['n']} matches; validation window [{split['valid_start']}, {split['test_start']}), "
        f"test window [{split['test_start']}, {split['n']}) ({split['n'] - split['test_start']} matches). "
        "Every match is predicted from the ratings before it; log loss clips p to [1e-15, 1-1e-15]; "
        "draws count 0.5 in log loss and Brier and are left out of accuracy.</p>",
        _table(
            "Test window",
            ["system", "log loss", "Brier", "accuracy", "valid log loss", "seconds"],
            [
                [
                    s["system"],
                    s["log_loss"],
                    s["brier"],
                    s["accuracy"],
                    (s["valid"] or {}).get("log_loss"),
                    s["seconds"],
                ]
                for s in systems
            ],
        ),
    ]
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
                "Rating drift over the test window (each system's own scale)",
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
    parts.append(_img(calibration_png(systems), "calibration curves"))
    if run.get("timeline"):
        parts.append(
            _img(distribution_png(run["timeline"], f"Ratings over time: {systems[0]['system']}"), "ratings")
        )
    return "\n".join(parts)


def _simulate_section(run: Mapping[str, Any]) -> str:
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
            "<h2>Simulated league</h2>",
            "<p>" + html.escape(", ".join(f"{k}={v}" for k, v in league.items())) + "</p>",
            _table(
                "Rule sets on the same simulated matches",
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
    """The HTML page for ``runs`` (backtest and simulate runs, in the given order).

    Raises:
        ValidationError: no runs, or a run whose ``kind`` is not ``backtest`` or ``simulate``.
    """
    if not runs:
        raise ValidationError("runs", "give at least one saved backtest or simulate run")
    sections = []
    for i, run in enumerate(runs):
        kind = run.get("kind") if isinstance(run, Mapping) else None
        if kind == "backtest":
            sections.append(_backtest_section(run))
        elif kind == "simulate":
            sections.append(_simulate_section(run))
        else:
            raise ValidationError(f"runs[{i}].kind", f"must be 'backtest' or 'simulate', got {kind!r}")
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>\n"
        + "\n".join(sections)
        + "</body></html>\n"
    )
