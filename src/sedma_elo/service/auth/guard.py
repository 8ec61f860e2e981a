"""The one key check of every authenticated route: bearer token -> known key -> scope -> rate limit."""

from __future__ import annotations

from ...errors import AuthError
from ...storage import Database
from . import keys
from .keys import KeyInfo, Scope
from .limits import KeyCache, RateLimiter

__all__ = ["KeyGuard", "bearer_secret"]


def bearer_secret(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (``None`` for another scheme)."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


class KeyGuard:
    """Checks API keys against ``db``, through a :class:`KeyCache` and a :class:`RateLimiter`."""

    def __init__(self, db: Database, limiter: RateLimiter, cache: KeyCache) -> None:
        self.db = db
        self.limiter = limiter
        self.cache = cache

    def authorize(self, secret: str | None, scope: Scope) -> KeyInfo:
        """The key behind ``secret``, checked for ``scope`` and charged to its rate limit.

        Raises:
            AuthError: no key or an unknown one. PermissionDeniedError: the wrong scope.
            RateLimitError: the key's rate limit is used up.
        """
        if not secret:
            raise AuthError("an API key is required: send 'Authorization: Bearer sk_...'")
        digest = keys.hash_key(secret)
        info = self.cache.get(digest)
        if info is None:
            info = keys.authenticate(self.db, secret)
            self.cache.put(digest, info)
        keys.require_scope(info, scope)
        self.limiter.check(info.id)
        return info

    def forget_keys(self) -> None:
        """Drop every cached key (call after revoking one)."""
        self.cache.clear()
