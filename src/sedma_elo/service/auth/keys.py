"""API keys: random ``sk_...`` secrets of which only the SHA-256 is stored.

A key has one scope: ``games`` (post game records only: the service derives the statistics, so a
game server cannot forge its bonuses), ``write`` (post matches with their statistics, and game
records) or ``admin`` (everything, including void and re-rate).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import insert, select, update

from ...errors import AuthError, NotFoundError, PermissionDeniedError, ValidationError
from ...storage import Database
from ...storage.schema import api_keys
from ..ledger.types import now_text

__all__ = [
    "KEY_PREFIX",
    "MIN_KEY_LENGTH",
    "SCOPES",
    "KeyInfo",
    "Scope",
    "authenticate",
    "check_key_strength",
    "create_key",
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

    ``secret`` imports a given key (e.g. an admin bootstrap key); it must start with ``sk_`` and be
    at least :data:`MIN_KEY_LENGTH` characters long.

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
    """Refuse a key that does not start with ``sk_`` or is shorter than :data:`MIN_KEY_LENGTH`."""
    if not key.startswith(KEY_PREFIX):
        raise ValidationError(field, f"must start with {KEY_PREFIX!r}")
    if len(key) < MIN_KEY_LENGTH:
        raise ValidationError(field, f"must be at least {MIN_KEY_LENGTH} characters long")


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
    digest = hash_key(key)
    with db.read.connect() as conn:
        row = conn.execute(select(api_keys).where(api_keys.c.key_hash == digest)).first()
    # The lookup is by hash; comparing the digests in constant time as well costs nothing.
    if row is None or not hmac.compare_digest(row.key_hash, digest) or row.revoked_at is not None:
        raise AuthError("unknown or revoked API key")
    return KeyInfo(row.id, row.prefix, row.scope, row.label, row.created_at, row.revoked_at)


def require_scope(info: KeyInfo, scope: Scope) -> None:
    """Raise :class:`PermissionDeniedError` unless ``info`` allows ``scope``.

    Admin allows everything; write allows games too; a games key may only post game records.
    """
    if info.scope != scope and info.scope != "admin" and scope not in _ALSO.get(info.scope, ()):
        raise PermissionDeniedError(f"this key has scope {info.scope!r}; {scope!r} is needed")
