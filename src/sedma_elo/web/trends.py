"""The leaderboard's "recent trend": a player's rating change over their last matches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .chart import build_sparkline

__all__ = ["Trend", "trend_of"]


@dataclass(frozen=True, slots=True)
class Trend:
    """A rating change over the last ``matches`` matches, with a sparkline (``spark`` polyline points)."""

    delta: int
    matches: int
    spark: str
    width: int
    height: int


def trend_of(ratings: Sequence[int]) -> Trend | None:
    """The trend of ``ratings`` oldest first, the first being the rating before the first match counted.

    ``None`` when there is no match (fewer than two ratings).
    """
    if len(ratings) < 2:
        return None
    spark = build_sparkline(ratings)
    return Trend(ratings[-1] - ratings[0], len(ratings) - 1, spark.points, spark.width, spark.height)
