"""PNG plots for backtests and reports (matplotlib, no display needed)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

__all__ = ["calibration_png", "distribution_png"]


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def calibration_png(systems: Sequence[Mapping[str, Any]]) -> bytes:
    """Calibration curves (mean outcome against mean forecast per bin) of backtest results.

    ``systems`` are the mappings of ``SystemResult.to_dict()`` (keys ``system``, ``calibration``).
    """
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect")
    for s in systems:
        bins = s["calibration"]
        ax.plot(
            [b["mean_predicted"] for b in bins],
            [b["mean_observed"] for b in bins],
            marker="o",
            markersize=3,
            label=s["system"],
        )
    ax.set_xlabel("predicted probability that side a wins")
    ax.set_ylabel("observed share of side-a wins")
    ax.set_title("Calibration on the test window")
    ax.legend(fontsize=7)
    return _png(fig)


def distribution_png(timeline: Sequence[Mapping[str, float]], title: str) -> bytes:
    """Rating distribution over time: mean, median and the 10-90% and 25-75% bands."""
    fig, ax = plt.subplots(figsize=(8, 4))
    x = [row["match"] for row in timeline]
    ax.fill_between(x, [r["q10"] for r in timeline], [r["q90"] for r in timeline], alpha=0.2, label="10-90%")
    ax.fill_between(x, [r["q25"] for r in timeline], [r["q75"] for r in timeline], alpha=0.4, label="25-75%")
    ax.plot(x, [r["q50"] for r in timeline], label="median")
    ax.plot(x, [r["mean"] for r in timeline], linestyle="--", label="mean")
    ax.set_xlabel("matches played")
    ax.set_ylabel("rating of players seen so far")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return _png(fig)
