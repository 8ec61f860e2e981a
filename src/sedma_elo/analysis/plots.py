"""PNG plots for backtests and reports (matplotlib, no display needed)."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

__all__ = ["calibration_png", "distribution_png", "pareto_png"]


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def calibration_png(systems: Sequence[Mapping[str, Any]], columns: int = 3) -> bytes:
    """Calibration of backtest results: one small plot per system (mean outcome against mean forecast).

    ``systems`` are the mappings of ``SystemResult.to_dict()`` (keys ``system``, ``calibration``,
    ``log_loss``). Each panel has the diagonal of perfect calibration and the same axes, so the
    panels compare at a glance; a point's size grows with the number of matches in its bin.
    """
    count = max(1, len(systems))
    cols = min(columns, count)
    rows = -(-count // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.2 * cols, 3.2 * rows), sharex=True, sharey=True, squeeze=False
    )
    for k, ax in enumerate(axes.flat):
        if k >= len(systems):
            ax.axis("off")
            continue
        s = systems[k]
        bins = s["calibration"]
        total = sum(b.get("count", 1) for b in bins) or 1
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
        ax.plot(
            [b["mean_predicted"] for b in bins], [b["mean_observed"] for b in bins], color="C0", linewidth=1
        )
        ax.scatter(
            [b["mean_predicted"] for b in bins],
            [b["mean_observed"] for b in bins],
            s=[10 + 200 * b.get("count", 1) / total for b in bins],
            color="C0",
        )
        ax.set_title(f"{s['system']}\nlog loss {s['log_loss']:.4f}", fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("forecast p(side a wins)", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("observed share of side-a wins", fontsize=8)
    fig.suptitle("Calibration on the test window, one panel per system", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def pareto_png(trials: Sequence[Mapping[str, Any]], front: Sequence[Mapping[str, Any]], chosen: int) -> bytes:
    """Tuning trials by validation log loss (x) and |drift per 100k matches| (y, symlog).

    Every trial is a small grey point (hollow when it misses the constraints); the Pareto front
    of the feasible ones is coloured by its losing-well gain, and the chosen trial is ringed.
    """
    fig, ax = plt.subplots(figsize=(7, 4.5))
    finite = [t for t in trials if math.isfinite(t["valid_log_loss"]) and math.isfinite(t["drift_per_100k"])]
    for feasible, face in ((True, "grey"), (False, "none")):
        pts = [t for t in finite if bool(t.get("feasible", True)) is feasible]
        ax.scatter(
            [t["valid_log_loss"] for t in pts],
            [abs(t["drift_per_100k"]) for t in pts],
            s=8,
            facecolors=face,
            edgecolors="grey",
            linewidths=0.5,
            label="trials meeting the constraints" if feasible else "trials missing them",
        )
    if front:
        sc = ax.scatter(
            [t["valid_log_loss"] for t in front],
            [abs(t["drift_per_100k"]) for t in front],
            c=[t["losing_well"] for t in front],
            cmap="viridis",
            s=36,
            label="Pareto front",
            zorder=3,
        )
        fig.colorbar(sc, ax=ax, label="losing-well gain (points)")
    for t in finite:
        if t["trial"] == chosen:
            ax.scatter(
                [t["valid_log_loss"]],
                [abs(t["drift_per_100k"])],
                s=160,
                facecolors="none",
                edgecolors="red",
                linewidths=1.5,
                label=f"chosen (trial {chosen})",
                zorder=4,
            )
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("validation log loss")
    ax.set_ylabel("|drift| per 100,000 matches (points)")
    ax.set_title("Tuning: prediction against fairness")
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
