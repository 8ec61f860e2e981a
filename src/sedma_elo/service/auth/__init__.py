"""API keys (``keys``), the per-process rate limit and key cache (``limits``), the key check (``guard``)."""

from .guard import KeyGuard, bearer_secret
from .keys import KeyInfo, Scope, authenticate, create_key, list_keys, revoke_key
from .limits import KeyCache, RateLimiter

__all__ = [
    "KeyCache",
    "KeyGuard",
    "KeyInfo",
    "RateLimiter",
    "Scope",
    "authenticate",
    "bearer_secret",
    "create_key",
    "list_keys",
    "revoke_key",
]
