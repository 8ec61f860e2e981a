"""The one key check of every authenticated route: bearer token -> known key -> scope -> rate limit.

Unknown keys must cost no more than known ones (issue 12: a flood of random tokens cut real writes
by 93%). So a key is looked up in the database at most once per ``KeyCache`` ttl when valid and
once per ``MissCache`` ttl when not; an address whose failed checks used up its
:class:`~.limits.FailureLimiter` bucket is answered 429 without a lookup; and the async check runs
the lookup on a small thread pool of its own, never on the event loop.

Checks of one key that arrive while its lookup is in flight wait for that lookup instead of
starting their own, and take no token of their address unless the key turns out unknown. Without
that, a client opening more connections than the address's burst to a process that had not seen
its key yet (a restart, a deploy, a reverse proxy's pool: one address for every client) got 429
for a valid key on the connections past the burst (stop 45: 8-17 of them at 64 connections).
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple

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
        self._lock = threading.Lock()
        #: Lookups in flight by key hash: later checks of the same key wait for them.
        self._inflight: dict[str, Future[KeyInfo | None]] = {}

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
        check = self._cached(secret, address)
        if isinstance(check, KeyInfo):
            return self._admit(check, scope)
        if check.owner:
            self._look_up(check)
        return self._admit(self._settle(check, address, check.lookup.result()), scope)

    async def authorize_async(self, secret: str | None, scope: Scope, address: str | None = None) -> KeyInfo:
        """:meth:`authorize` for an event loop: a lookup runs on the guard's own threads."""
        check = self._cached(secret, address)
        if isinstance(check, KeyInfo):
            return self._admit(check, scope)
        if check.owner:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(LOOKUP_THREADS, thread_name_prefix="sedma-elo-keys")
            # The job settles the lookup itself, so that a cancelled request leaves no waiter hanging.
            job = self._pool.submit(self._look_up, check)
            job.add_done_callback(lambda done: self._cancel_if(done, check))
        found = await asyncio.wrap_future(check.lookup)
        return self._admit(self._settle(check, address, found), scope)

    def _cached(self, secret: str | None, address: str | None) -> KeyInfo | _Check:
        """The key if the cache trusts it, else the lookup to wait for (started by this check if it
        is the ``owner``, which then took a token of ``address`` unless the key was valid lately);
        raise if the key is known bad or the address limited.
        """
        if not secret:
            raise AuthError("an API key is required: send 'Authorization: Bearer sk_...'")
        digest = keys.hash_key(secret)
        info = self.cache.get(digest)
        if info is not None:
            return info
        if digest in self.misses:
            self.failures.acquire(address)
            raise AuthError("unknown or revoked API key")
        with self._lock:
            lookup = self._inflight.get(digest)
            if lookup is not None:  # another check of this key is looking it up: wait for it
                return _Check(digest, lookup)
            # Valid lately: looked up again whatever the address did; else a token is taken before
            # the lookup, so that lookups in flight count too.
            charged = not self.cache.seen(digest)
            if charged:
                self.failures.acquire(address)
            lookup = self._inflight[digest] = Future()
        return _Check(digest, lookup, owner=True, charged=charged)

    def _look_up(self, check: _Check) -> None:
        """The owner's lookup: its outcome (the key, None or the database's error) goes to every
        check waiting in ``check.lookup``; the next check of the key looks it up again."""
        try:
            found = keys.find_key(self.db, check.digest)
        except BaseException as error:
            self._release(check)
            check.lookup.set_exception(error)
            return
        self._release(check)
        check.lookup.set_result(found)

    def _cancel_if(self, job: Future[None], check: _Check) -> None:
        """A lookup job the pool cancelled at shut-down cancels the checks waiting for it."""
        if job.cancelled():
            self._release(check)
            check.lookup.cancel()

    def _release(self, check: _Check) -> None:
        with self._lock:
            self._inflight.pop(check.digest, None)

    def _settle(self, check: _Check, address: str | None, info: KeyInfo | None) -> KeyInfo:
        """Cache a lookup's outcome; raise for an unknown key (the owner's token stays taken, a waiter
        takes one now, as every failed check does)."""
        if info is None:
            self.misses.add(check.digest)
            if not check.owner:
                self.failures.acquire(address)
            raise AuthError("unknown or revoked API key")
        if check.charged:
            self.failures.refund(address)
        self.cache.put(check.digest, info)
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


class _Check(NamedTuple):
    """A key check that the caches could not settle: the lookup it waits for."""

    digest: str
    lookup: Future[KeyInfo | None]
    #: This check started the lookup (the others wait for it).
    owner: bool = False
    #: The owner took a token of its address for the lookup (refunded if the key is valid).
    charged: bool = False
