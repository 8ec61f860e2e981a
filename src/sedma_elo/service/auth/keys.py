"""API keys: random ``sk_...`` secrets of which only the SHA-256 is stored.

A key has one scope: ``games`` (post game records only: the service derives the statistics, so a
game server cannot forge its bonuses), ``write`` (post matches with their statistics, and game
records) or ``admin`` (everything, including void and re-rate).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import insert, select, update

from ...errors import AuthError, NotFoundError, PermissionDeniedError, ValidationError
from ...storage import Database
from ...storage.schema import api_keys
from ..ledger.types import now_text

__all__ = [
    "KEY_PREFIX",
    "MIN_DISTINCT_CHARS",
    "MIN_ENTROPY_BITS",
    "MIN_KEY_LENGTH",
    "SCOPES",
    "KeyInfo",
    "Scope",
    "authenticate",
    "check_key_strength",
    "create_key",
    "estimated_bits",
    "find_key",
    "hash_key",
    "list_keys",
    "require_scope",
    "revoke_key",
]

Scope = Literal["games", "write", "admin"]
SCOPES: tuple[Scope, ...] = ("games", "write", "admin")
#: What each scope may do besides itself (admin may do everything).
_ALSO: dict[str, tuple[Scope, ...]] = {"write": ("games",), "games": ()}
KEY_PREFIX = "sk_"
#: Keys shorter than this are refused everywhere (a generated key has 46 characters).
MIN_KEY_LENGTH = 32
#: Least number of distinct characters after the prefix (a random 29-character body has ~23).
MIN_DISTINCT_CHARS = 12
#: Least estimated entropy of the part after the prefix, in bits (see :func:`estimated_bits`).
MIN_ENTROPY_BITS = 96.0
#: What a key may hold after its prefix: the URL-safe base64 alphabet of ``secrets.token_urlsafe``.
_KEY_BODY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """What is known about a key without its secret."""

    id: int
    prefix: str
    scope: Scope
    label: str
    created_at: str
    revoked_at: str | None

    def to_dict(self) -> dict[str, object]:
        """JSON-able form."""
        return {
            "id": self.id,
            "prefix": self.prefix,
            "scope": self.scope,
            "label": self.label,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


def hash_key(key: str) -> str:
    """The SHA-256 hex digest stored for ``key``."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _check_scope(scope: str) -> Scope:
    if scope not in SCOPES:
        raise ValidationError("scope", f"must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


def create_key(
    db: Database, scope: str, label: str = "", *, secret: str | None = None
) -> tuple[str, KeyInfo]:
    """Create a key and return ``(secret, info)``; the secret is shown only this once.

    ``secret`` imports a given key (e.g. an admin bootstrap key); it must pass
    :func:`check_key_strength`.

    Raises:
        ValidationError: unknown scope, or an imported secret that is too weak.
    """
    checked = _check_scope(scope)
    key = secret if secret is not None else KEY_PREFIX + secrets.token_urlsafe(32)
    check_key_strength("key", key)
    info_row = {
        "key_hash": hash_key(key),
        "prefix": key[:10],
        "scope": checked,
        "label": label[:200],
        "created_at": now_text(),
        "revoked_at": None,
    }
    with db.begin_write() as conn:
        existing = conn.execute(
            select(api_keys.c.id).where(api_keys.c.key_hash == info_row["key_hash"])
        ).first()
        if existing is not None:
            key_id = int(existing.id)
        else:
            key_id = int(
                conn.execute(insert(api_keys).values(**info_row).returning(api_keys.c.id)).scalar_one()
            )
    return key, KeyInfo(key_id, key[:10], checked, label[:200], str(info_row["created_at"]), None)


def check_key_strength(field: str, key: str) -> None:
    """Refuse a key that is not a strong ``sk_`` key; ``field`` names it in the error.

    The rule: ``sk_``, then only URL-safe characters (``A-Z a-z 0-9 _ -``), at least
    :data:`MIN_KEY_LENGTH` characters in all, at least :data:`MIN_DISTINCT_CHARS` distinct
    characters after the prefix and an estimated entropy (:func:`estimated_bits`) of at least
    :data:`MIN_ENTROPY_BITS`. A generated key (43 random characters) always passes; so does a random
    body of the minimum 29 characters, but not ``sk_`` + 29 ``a`` or 29 spaces.

    Raises:
        ValidationError: the key breaks one of these (the message says which).
    """
    if not key.startswith(KEY_PREFIX):
        raise ValidationError(field, f"must start with {KEY_PREFIX!r}")
    if len(key) < MIN_KEY_LENGTH:
        raise ValidationError(field, f"must be at least {MIN_KEY_LENGTH} characters long")
    body = key[len(KEY_PREFIX) :]
    if _KEY_BODY.fullmatch(body) is None:
        raise ValidationError(field, "may hold only the characters A-Z, a-z, 0-9, '_' and '-' after 'sk_'")
    distinct = len(set(body))
    if distinct < MIN_DISTINCT_CHARS:
        raise ValidationError(
            field,
            f"is too regular: {distinct} distinct characters after 'sk_', at least {MIN_DISTINCT_CHARS}",
        )
    bits = estimated_bits(body)
    if bits < MIN_ENTROPY_BITS:
        raise ValidationError(
            field,
            f"is too guessable: about {bits:.0f} bits of entropy, at least {MIN_ENTROPY_BITS:.0f}"
            " (use `sedma-elo keys create` or secrets.token_urlsafe(32))",
        )


def estimated_bits(text: str) -> float:
    """The entropy of ``text`` estimated from its own character frequencies, in bits.

    ``len(text)`` times the Shannon entropy of the distribution of its characters: 0 for a
    repeated character, about 185 to 240 for 43 random URL-safe characters. It is an upper bound
    for a text someone typed (``abcdefghijklmnopqrstuvwxyz012`` scores 141), not a measure of how
    random it is, so it only refuses keys that are plainly weak.
    """
    n = len(text)
    if n == 0:
        return 0.0
    return -sum(c * math.log2(c / n) for c in Counter(text).values())


def list_keys(db: Database) -> list[KeyInfo]:
    """Every key, revoked ones included, oldest first."""
    with db.read.connect() as conn:
        rows = conn.execute(select(api_keys).order_by(api_keys.c.id)).all()
    return [KeyInfo(r.id, r.prefix, r.scope, r.label, r.created_at, r.revoked_at) for r in rows]


def revoke_key(db: Database, key_id: int) -> KeyInfo:
    """Revoke key ``key_id`` (idempotent).

    Raises:
        NotFoundError: no key has this id.
    """
    with db.begin_write() as conn:
        row = conn.execute(select(api_keys).where(api_keys.c.id == key_id)).first()
        if row is None:
            raise NotFoundError(f"key {key_id} does not exist")
        revoked = row.revoked_at or now_text()
        conn.execute(update(api_keys).where(api_keys.c.id == key_id).values(revoked_at=revoked))
    return KeyInfo(row.id, row.prefix, row.scope, row.label, row.created_at, revoked)


def authenticate(db: Database, key: str | None) -> KeyInfo:
    """The key's info if ``key`` is a known, unrevoked key.

    Raises:
        AuthError: no key, or an unknown or revoked one.
    """
    if not key:
        raise AuthError("an API key is required: send 'Authorization: Bearer sk_...'")
    info = find_key(db, hash_key(key))
    if info is None:
        raise AuthError("unknown or revoked API key")
    return info


def find_key(db: Database, digest: str) -> KeyInfo | None:
    """The unrevoked key whose :func:`hash_key` is ``digest``, or None (a blocking database read)."""
    with db.read.connect() as conn:
        row = conn.execute(select(api_keys).where(api_keys.c.key_hash == digest)).first()
    # The lookup is by hash; comparing the digests in constant time as well costs nothing.
    if row is None or not hmac.compare_digest(row.key_hash, digest) or row.revoked_at is not None:
        return None
    return KeyInfo(row.id, row.prefix, row.scope, row.label, row.created_at, row.revoked_at)


def require_scope(info: KeyInfo, scope: Scope) -> None:
    """Raise :class:`PermissionDeniedError` unless ``info`` allows ``scope``.

    Admin allows everything; write allows games too; a games key may only post game records.
    """
    if info.scope != scope and info.scope != "admin" and scope not in _ALSO.get(info.scope, ()):
        raise PermissionDeniedError(f"this key has scope {info.scope!r}; {scope!r} is needed")
