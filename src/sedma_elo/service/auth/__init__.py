"""API keys (``keys``), the per-process limits and key caches (``limits``), the key check (``guard``)."""

from .guard import KeyGuard, bearer_secret
from .keys import KeyInfo, Scope, authenticate, create_key, list_keys, revoke_key
from .limits import FailureLimiter, KeyCache, MissCache, RateLimiter

__all__ = [
    "FailureLimiter",
    "KeyCache",
    "KeyGuard",
    "KeyInfo",
    "MissCache",
    "RateLimiter",
    "Scope",
    "authenticate",
    "bearer_secret",
    "create_key",
    "list_keys",
    "revoke_key",
]
