"""Per-process limits in front of the key check.

* :class:`RateLimiter`: a token bucket per API key (requests a known key may send).
* :class:`FailureLimiter`: a token bucket per client address for failed key checks, so a flood of
  made-up keys from one address is answered 429 without a database lookup.
* :class:`KeyCache`: keys checked lately, by hash (a hot writer does not look its key up each time).
* :class:`MissCache`: hashes found unknown lately (the same wrong key is not looked up again).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Hashable

from ...errors import RateLimitError
from .keys import KeyInfo

__all__ = ["FailureLimiter", "KeyCache", "MissCache", "RateLimiter"]

#: Most keys a :class:`KeyCache` holds before it starts afresh (bounds the memory of a key flood).
_CACHE_ENTRIES = 10_000
#: Most entries of a :class:`MissCache` or of the buckets of a :class:`FailureLimiter`.
_MISS_ENTRIES = 100_000


class _Buckets:
    """Token buckets by name: ``rate`` tokens per second refill each bucket up to ``burst``.

    Past ``max_entries`` names every bucket is forgotten (refilled): a flood of names can cost
    memory only up to the bound, and forgetting never refuses anyone.
    """

    def __init__(self, rate: float, burst: float, max_entries: int) -> None:
        self.rate = rate
        self.burst = burst
        self.max_entries = max_entries
        self._buckets: dict[Hashable, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def _tokens(self, name: Hashable, now: float) -> float:
        tokens, last = self._buckets.get(name, (self.burst, now))
        return min(self.burst, tokens + (now - last) * self.rate)

    def _store(self, name: Hashable, tokens: float, now: float) -> None:
        if name not in self._buckets and len(self._buckets) >= self.max_entries:
            self._buckets.clear()
        self._buckets[name] = (tokens, now)

    def take(self, name: Hashable) -> float:
        """Take a token from ``name``'s bucket: 0.0 if one was there, else the seconds until one is."""
        now = time.monotonic()
        with self._lock:
            tokens = self._tokens(name, now)
            if tokens >= 1.0:
                self._store(name, tokens - 1.0, now)
                return 0.0
            self._store(name, tokens, now)
        return (1.0 - tokens) / self.rate

    def give(self, name: Hashable) -> None:
        """Put one token back into ``name``'s bucket (never above ``burst``)."""
        now = time.monotonic()
        with self._lock:
            self._store(name, min(self.burst, self._tokens(name, now) + 1.0), now)


class RateLimiter:
    """A token bucket per API key, in this process only (N processes allow N times the rate).

    ``rate`` tokens per second refill a bucket of ``burst``; ``rate`` 0 switches the limit off.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._buckets = _Buckets(rate, float(burst), _CACHE_ENTRIES)

    def check(self, key_id: int) -> None:
        """Take one token from key ``key_id``'s bucket.

        Raises:
            RateLimitError: the bucket is empty (``retry_after`` says for how long, in seconds).
        """
        if self.rate <= 0:
            return
        wait = self._buckets.take(key_id)
        if wait > 0:
            raise RateLimitError("rate limit exceeded for this API key", retry_after=wait)


class FailureLimiter:
    """Failed key checks per client address: ``burst`` at once, then ``rate`` per second.

    Every check that may fail takes a token first (:meth:`acquire`), so lookups still in flight
    count too; a check that found a valid key gives its token back (:meth:`refund`). ``rate`` 0
    switches the limit off. Per process.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self._buckets = _Buckets(rate, float(burst), _MISS_ENTRIES)

    def acquire(self, address: str | None) -> None:
        """Take a token of ``address`` for a check that may fail.

        Raises:
            RateLimitError: too many failed key checks from ``address`` lately (nothing is taken).
        """
        if self.rate <= 0:
            return
        wait = self._buckets.take(address)
        if wait > 0:
            raise RateLimitError(
                "too many requests with unknown API keys from this address", retry_after=wait
            )

    def refund(self, address: str | None) -> None:
        """Give back the token of a check that found a valid key."""
        if self.rate > 0:
            self._buckets.give(address)


class KeyCache:
    """Checked keys by hash, trusted for ``ttl`` seconds, so a hot writer does not look its key up every time.

    An entry past its ``ttl`` is not trusted but still tells that the key was valid lately
    (:meth:`seen`): its next lookup is not held back by the failure limit of the address.
    """

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._cache: dict[str, tuple[KeyInfo, float]] = {}

    def get(self, digest: str) -> KeyInfo | None:
        """The key checked under ``digest`` within the last ``ttl`` seconds, if any."""
        hit = self._cache.get(digest)
        if hit is None or hit[1] < time.monotonic():
            return None
        return hit[0]

    def seen(self, digest: str) -> bool:
        """Whether ``digest`` was a valid key when last checked (however long ago)."""
        return digest in self._cache

    def put(self, digest: str, info: KeyInfo) -> None:
        """Remember a checked key (nothing when ``ttl`` is 0)."""
        if self.ttl > 0:
            if len(self._cache) > _CACHE_ENTRIES:
                self._cache.clear()
            self._cache[digest] = (info, time.monotonic() + self.ttl)

    def clear(self) -> None:
        """Forget every key (after a revocation)."""
        self._cache.clear()


class MissCache:
    """Hashes of keys found unknown or revoked, for ``ttl`` seconds; at most ``max_entries`` (oldest out).

    A key created after its hash was cached here is refused for up to ``ttl`` seconds (only an
    imported secret can be; generated ones are new). ``ttl`` 0 switches it off.
    """

    def __init__(self, ttl: float, max_entries: int = _MISS_ENTRIES) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._until: OrderedDict[str, float] = OrderedDict()  # oldest first: all share one ttl
        self._lock = threading.Lock()

    def __contains__(self, digest: str) -> bool:
        until = self._until.get(digest)
        return until is not None and until >= time.monotonic()

    def add(self, digest: str) -> None:
        """Remember ``digest`` as unknown for ``ttl`` seconds."""
        if self.ttl <= 0:
            return
        now = time.monotonic()
        with self._lock:
            self._until[digest] = now + self.ttl
            self._until.move_to_end(digest)
            while self._until and (
                len(self._until) > self.max_entries or next(iter(self._until.values())) < now
            ):
                self._until.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._until.clear()

    def __len__(self) -> int:
        return len(self._until)
