"""Keyset cursors of the leaderboard and of a player's history: opaque text, fully checked on the way in.

A cursor is URL-safe base64 of a JSON list. Anything a client sends back is validated field by field
before it reaches SQL (a forged cursor is a 422 naming ``cursor``, never a database error).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ...core.rules import MAX_RATING, MIN_RATING
from ...errors import ValidationError
from .types import HistoryOrder

__all__ = ["decode_cursor", "encode_cursor", "history_bound", "history_cursor", "leaderboard_key"]

_NOT_OURS = "is not a cursor returned by this service"
#: The largest sequence a cursor may carry (a bigint on PostgreSQL).
_MAX_SEQUENCE = 2**62


def encode_cursor(*parts: object) -> str:
    """The cursor text holding ``parts`` (JSON values)."""
    return base64.urlsafe_b64encode(json.dumps(list(parts)).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, field_name: str = "cursor") -> list[Any]:
    """The list a cursor holds.

    Raises:
        ValidationError: ``cursor`` is not base64 of a JSON list.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError(field_name, _NOT_OURS) from exc
    if not isinstance(value, list):
        raise ValidationError(field_name, _NOT_OURS)
    return value


def _is_int(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _is_stored_text(value: object) -> bool:
    """Whether ``value`` is text a database can compare: UTF-8 encodable (no lone surrogate), no NUL."""
    if not isinstance(value, str) or len(value) > 128 or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def leaderboard_key(cursor: str) -> tuple[int, str, int]:
    """The (rating, player id, rank) of the last row before the page a leaderboard cursor asks for.

    Raises:
        ValidationError: ``cursor`` was not made by :func:`encode_cursor` for the leaderboard.
    """
    parts = decode_cursor(cursor)
    if (
        len(parts) != 3
        or not _is_int(parts[0], MIN_RATING, MAX_RATING)
        or not _is_stored_text(parts[1])
        or not _is_int(parts[2], 0, _MAX_SEQUENCE - 1)
    ):
        raise ValidationError("cursor", _NOT_OURS)
    return parts[0], parts[1], parts[2]


def history_bound(cursor: str, order: HistoryOrder) -> int:
    """The sequence a history cursor for ``order`` continues after (asc) or before (desc).

    Raises:
        ValidationError: ``cursor`` was not returned for a history page in this order.
    """
    parts = decode_cursor(cursor)
    wanted = 1 if order == "asc" else 2
    if (
        len(parts) != wanted
        or not _is_int(parts[0], 0, _MAX_SEQUENCE - 1)
        or (order == "desc" and parts[1] != "desc")
    ):
        raise ValidationError("cursor", "is not a cursor returned by this service for this order")
    bound: int = parts[0]
    return bound


def history_cursor(last_sequence: int, order: HistoryOrder) -> str:
    """The cursor of the page after one ending at ``last_sequence`` in ``order``."""
    return encode_cursor(last_sequence) if order == "asc" else encode_cursor(last_sequence, "desc")
