"""Webhook subscriptions: register (an http(s) URL and a secret), list and delete.

A subscription is a URL, a secret that signs its deliveries and a cursor into the change feed
(``delivered_through``): everything after the cursor is still to be delivered, in sequence order.
A new subscription starts at the feed's end (only what happens from now on) unless told ``after``.
The secret is stored as given (it must sign every delivery) and never shown again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, delete, func, insert, select

from ...errors import NotFoundError, ValidationError
from ...storage import Database
from ...storage.schema import change_events, webhook_subscriptions
from ..ledger.types import now_text

__all__ = [
    "MAX_SECRET",
    "MAX_URL",
    "MIN_SECRET",
    "Subscription",
    "check_url",
    "create_subscription",
    "delete_subscription",
    "list_subscriptions",
]

MIN_SECRET = 16
MAX_SECRET = 200
MAX_URL = 2000


@dataclass(frozen=True, slots=True)
class Subscription:
    """A subscription without its secret, with its delivery state."""

    id: int
    url: str
    label: str
    created_at: str
    delivered_through: int
    backlog: int
    attempts: int
    next_attempt_at: float
    last_error: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (no secret)."""
        return {
            "id": self.id,
            "url": self.url,
            "label": self.label,
            "created_at": self.created_at,
            "delivered_through": self.delivered_through,
            "backlog": self.backlog,
            "attempts": self.attempts,
            "next_attempt_at": self.next_attempt_at,
            "last_error": self.last_error,
        }


def check_url(url: str) -> str:
    """``url`` if it is an absolute ``http`` or ``https`` URL with a host and no credentials.

    Raises:
        ValidationError: another scheme (``file:``, ``ftp:``...), no host, a user or password in
            it, a control character, or longer than :data:`MAX_URL` (field ``url``).
    """
    if len(url) > MAX_URL:
        raise ValidationError("url", f"at most {MAX_URL} characters")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise ValidationError("url", "must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises for a port that is not a number)
    except ValueError as exc:
        raise ValidationError("url", f"not a URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValidationError("url", f"must be an http:// or https:// URL, got scheme {parts.scheme!r}")
    if not parts.hostname:
        raise ValidationError("url", "must name a host")
    if parts.username is not None or parts.password is not None:
        raise ValidationError("url", "must not carry a user or password (the secret signs each delivery)")
    return url


def _check_secret(secret: str) -> None:
    if not MIN_SECRET <= len(secret) <= MAX_SECRET:
        raise ValidationError("secret", f"must have {MIN_SECRET} to {MAX_SECRET} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in secret):
        raise ValidationError("secret", "must not contain control characters")


def _top(conn: Connection) -> int:
    return int(conn.execute(select(func.coalesce(func.max(change_events.c.sequence), 0))).scalar_one())


def create_subscription(
    db: Database, url: str, secret: str, label: str = "", after: int | None = None
) -> Subscription:
    """Register ``url``; deliveries start after sequence ``after`` (default: the feed's end now).

    Raises:
        ValidationError: a bad ``url`` (see :func:`check_url`), a secret of the wrong length or
            with control characters, or ``after`` below 0.
    """
    check_url(url)
    _check_secret(secret)
    if after is not None and after < 0:
        raise ValidationError("after", "must be a sequence >= 0")
    with db.begin_write() as conn:
        start = _top(conn) if after is None else after
        sid = conn.execute(
            insert(webhook_subscriptions)
            .values(
                url=url,
                secret=secret,
                label=label,
                created_at=now_text(),
                delivered_through=start,
                attempts=0,
                next_attempt_at=0.0,
            )
            .returning(webhook_subscriptions.c.id)
        ).scalar_one()
    return _one(db, int(sid))


def list_subscriptions(db: Database) -> list[Subscription]:
    """Every subscription, oldest first, with how many events each still has to receive."""
    with db.read.connect() as conn:
        top = _top(conn)
        rows = conn.execute(select(webhook_subscriptions).order_by(webhook_subscriptions.c.id)).all()
    return [_subscription(r, top) for r in rows]


def _one(db: Database, sid: int) -> Subscription:
    found = [s for s in list_subscriptions(db) if s.id == sid]
    if not found:
        raise NotFoundError(f"webhook subscription {sid} does not exist")
    return found[0]


def delete_subscription(db: Database, sid: int) -> Subscription:
    """Delete subscription ``sid`` (a delivery under way is its last); return it as it was.

    Raises:
        NotFoundError: no such subscription.
    """
    with db.begin_write() as conn:
        top = _top(conn)
        row = conn.execute(select(webhook_subscriptions).where(webhook_subscriptions.c.id == sid)).first()
        if row is None:
            raise NotFoundError(f"webhook subscription {sid} does not exist")
        conn.execute(delete(webhook_subscriptions).where(webhook_subscriptions.c.id == sid))
    return _subscription(row, top)


def _subscription(row: Any, top: int) -> Subscription:
    return Subscription(
        id=row.id,
        url=row.url,
        label=row.label,
        created_at=row.created_at,
        delivered_through=row.delivered_through,
        backlog=max(0, top - row.delivered_through),
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
    )
