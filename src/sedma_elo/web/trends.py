"""The leaderboard's "recent trend": a player's rating change over their last matches, cached.

A trend needs the end of a player's history, which the service reads oldest first, so each one
costs a read per player. The cache keeps trends per app, keyed by everything that changes when a
new match is applied to the player (ratings version, player id, matches played, current rating),
so a cached trend is never stale after a new match. Voiding a match recomputes ratings in place:
``ttl`` seconds bound how long such a trend can stay outdated.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from .chart import build_sparkline

__all__ = ["Trend", "TrendCache", "trend_of"]


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


class TrendCache:
    """A thread-safe LRU of trends with a time limit per entry."""

    def __init__(self, size: int = 20_000, ttl: float = 60.0) -> None:
        self.size = size
        self.ttl = ttl
        self._items: OrderedDict[Hashable, tuple[float, Trend | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Trend | None]) -> Trend | None:
        """The cached trend for ``key``, or ``compute()`` stored under it (computed outside the lock)."""
        now = time.monotonic()
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] > now:
                self._items.move_to_end(key)
                return hit[1]
        value = compute()
        with self._lock:
            self._items[key] = (now + self.ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)
