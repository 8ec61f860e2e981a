"""Per-process limits in front of the key check: a token bucket per key and a short cache of checked keys."""

from __future__ import annotations

import threading
import time

from ...errors import RateLimitError
from .keys import KeyInfo

__all__ = ["KeyCache", "RateLimiter"]

#: Most keys a :class:`KeyCache` holds before it starts afresh (bounds the memory of a key flood).
_CACHE_ENTRIES = 10_000


class RateLimiter:
    """A token bucket per API key, in this process only (N processes allow N times the rate).

    ``rate`` tokens per second refill a bucket of ``burst``; ``rate`` 0 switches the limit off.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._buckets: dict[int, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def check(self, key_id: int) -> None:
        """Take one token from key ``key_id``'s bucket.

        Raises:
            RateLimitError: the bucket is empty (``retry_after`` says for how long, in seconds).
        """
        if self.rate <= 0:
            return
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key_id, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                raise RateLimitError(
                    "rate limit exceeded for this API key", retry_after=(1.0 - tokens) / self.rate
                )
            self._buckets[key_id] = (tokens - 1.0, now)


class KeyCache:
    """Checked keys by hash for ``ttl`` seconds, so a hot writer does not look its key up every time."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._cache: dict[str, tuple[KeyInfo, float]] = {}

    def get(self, digest: str) -> KeyInfo | None:
        """The key checked under ``digest`` within the last ``ttl`` seconds, if any."""
        hit = self._cache.get(digest)
        if hit is None or hit[1] < time.monotonic():
            return None
        return hit[0]

    def put(self, digest: str, info: KeyInfo) -> None:
        """Remember a checked key (nothing when ``ttl`` is 0)."""
        if self.ttl > 0:
            if len(self._cache) > _CACHE_ENTRIES:
                self._cache.clear()
            self._cache[digest] = (info, time.monotonic() + self.ttl)

    def clear(self) -> None:
        """Forget every key (after a revocation)."""
        self._cache.clear()
