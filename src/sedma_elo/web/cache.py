"""A small thread-safe LRU cache with a time limit per entry, for values the pages derive.

The player page keeps one per app (on ``app.state.web_matches``): the sides and winner of each match
it lists, which never change once stored, so that a page of 25 matches does not explain 25 matches
again on every view. Leaderboard trends are not cached: one batched read per page is cheap enough
(see ``docs/web.md``) and always current.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["TimedLru"]

V = TypeVar("V")


class TimedLru(Generic[V]):
    """At most ``size`` entries, each trusted for ``ttl`` seconds; least recently used go first."""

    def __init__(self, size: int = 20_000, ttl: float = 60.0) -> None:
        self.size = size
        self.ttl = ttl
        self._items: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The cached value for ``key``, or ``compute()`` stored under it (computed outside the lock).

        An exception from ``compute`` propagates and nothing is stored.
        """
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
