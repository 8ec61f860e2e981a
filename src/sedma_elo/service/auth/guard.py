"""The one key check of every authenticated route: bearer token -> known key -> scope -> rate limit.

Unknown keys must cost no more than known ones (issue 12: a flood of random tokens cut real writes
by 93%). So a key is looked up in the database at most once per ``KeyCache`` ttl when valid and
once per ``MissCache`` ttl when not; an address whose failed checks used up its
:class:`~.limits.FailureLimiter` bucket is answered 429 without a lookup; and the async check runs
the lookup on a small thread pool of its own, never on the event loop.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from ...errors import AuthError
from ...storage import Database
from . import keys
from .keys import KeyInfo, Scope
from .limits import FailureLimiter, KeyCache, MissCache, RateLimiter

__all__ = ["KeyGuard", "bearer_secret"]

#: Threads that look keys up for :meth:`KeyGuard.authorize_async` (each holds a database connection).
LOOKUP_THREADS = 4


def bearer_secret(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (``None`` for another scheme)."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


class KeyGuard:
    """Checks API keys against ``db``, through caches of valid and unknown keys and two limits.

    ``failures`` and ``misses`` default to no limit and no cache of unknown keys.
    """

    def __init__(
        self,
        db: Database,
        limiter: RateLimiter,
        cache: KeyCache,
        failures: FailureLimiter | None = None,
        misses: MissCache | None = None,
    ) -> None:
        self.db = db
        self.limiter = limiter
        self.cache = cache
        self.failures = FailureLimiter(0, 1) if failures is None else failures
        self.misses = MissCache(0) if misses is None else misses
        self._pool: ThreadPoolExecutor | None = None

    def authorize(self, secret: str | None, scope: Scope, address: str | None = None) -> KeyInfo:
        """The key behind ``secret``, checked for ``scope`` and charged to its rate limit.

        Blocks on a database lookup when the key is not cached: call it from a worker thread
        (a sync FastAPI dependency) or use :meth:`authorize_async`. ``address`` is the client's,
        for the limit of failed checks.

        Raises:
            AuthError: no key or an unknown one. PermissionDeniedError: the wrong scope.
            RateLimitError: the key's rate limit is used up, or ``address`` sent too many
            unknown keys lately.
        """
        digest, info, charged = self._cached(secret, address)
        if info is None:
            info = self._settle(digest, address, charged, keys.find_key(self.db, digest))
        return self._admit(info, scope)

    async def authorize_async(self, secret: str | None, scope: Scope, address: str | None = None) -> KeyInfo:
        """:meth:`authorize` for an event loop: a lookup runs on the guard's own threads."""
        digest, info, charged = self._cached(secret, address)
        if info is None:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(LOOKUP_THREADS, thread_name_prefix="sedma-elo-keys")
            loop = asyncio.get_running_loop()
            found = await loop.run_in_executor(self._pool, keys.find_key, self.db, digest)
            info = self._settle(digest, address, charged, found)
        return self._admit(info, scope)

    def _cached(self, secret: str | None, address: str | None) -> tuple[str, KeyInfo | None, bool]:
        """``(digest, key, charged)``: the key if the cache trusts it, else None and whether a token
        of ``address`` was taken for the lookup; raise if the key is known bad or the address limited.
        """
        if not secret:
            raise AuthError("an API key is required: send 'Authorization: Bearer sk_...'")
        digest = keys.hash_key(secret)
        info = self.cache.get(digest)
        if info is not None:
            return digest, info, False
        if digest in self.misses:
            self.failures.acquire(address)
            raise AuthError("unknown or revoked API key")
        if self.cache.seen(digest):  # valid lately: looked up again whatever the address did
            return digest, None, False
        self.failures.acquire(address)  # taken before the lookup, so lookups in flight count too
        return digest, None, True

    def _settle(self, digest: str, address: str | None, charged: bool, info: KeyInfo | None) -> KeyInfo:
        """Cache a lookup's outcome; raise for an unknown key (its token stays taken)."""
        if info is None:
            self.misses.add(digest)
            raise AuthError("unknown or revoked API key")
        if charged:
            self.failures.refund(address)
        self.cache.put(digest, info)
        return info

    def _admit(self, info: KeyInfo, scope: Scope) -> KeyInfo:
        keys.require_scope(info, scope)
        self.limiter.check(info.id)
        return info

    def forget_keys(self) -> None:
        """Drop every cached key (call after revoking one)."""
        self.cache.clear()
        self.misses.clear()

    def close(self) -> None:
        """Stop the lookup threads (the app's shutdown calls it)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
