"""The pages' small LRU cache with a time limit."""

from __future__ import annotations

import pytest

from sedma_elo.web.cache import TimedLru


def test_second_get_does_not_compute_again() -> None:
    """A cached value is returned without calling compute again."""
    cache: TimedLru[int] = TimedLru()
    calls: list[int] = []
    assert cache.get("k", lambda: calls.append(1) or 7) == 7
    assert cache.get("k", lambda: calls.append(1) or 8) == 7
    assert calls == [1]


def test_least_recently_used_entry_is_dropped() -> None:
    """Beyond its size the cache forgets the entry used longest ago."""
    cache: TimedLru[str] = TimedLru(size=2)
    cache.get("a", lambda: "a")
    cache.get("b", lambda: "b")
    cache.get("a", lambda: "x")  # touches a
    cache.get("c", lambda: "c")  # evicts b
    assert len(cache) == 2
    assert cache.get("b", lambda: "b2") == "b2"
    assert cache.get("c", lambda: "c2") == "c"


def test_expired_entry_is_computed_again() -> None:
    """With a time limit of zero every get computes afresh."""
    cache: TimedLru[int] = TimedLru(ttl=0.0)
    values = iter([1, 2])
    assert cache.get("k", lambda: next(values)) == 1
    assert cache.get("k", lambda: next(values)) == 2


def test_a_failing_compute_stores_nothing() -> None:
    """An exception from compute propagates and the next get tries again."""
    cache: TimedLru[int] = TimedLru()

    def boom() -> int:
        raise LookupError("gone")

    with pytest.raises(LookupError):
        cache.get("k", boom)
    assert cache.get("k", lambda: 3) == 3
