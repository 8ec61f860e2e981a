"""Checks of one history field's text, shared by the CSV and JSON Lines readers."""

from __future__ import annotations

from datetime import datetime

from ...core.ids import id_problem
from ...core.model import (
    MAX_COUNT,
    check_count,
    played_at_problem,
)
from ...errors import HistoryError, ValidationError
from .arrays import _WINNER_CODES


def _when_problem(text: str) -> str | None:
    if not text:
        return "must not be empty"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return f"must be an ISO 8601 date or date and time, got {text!r}"
    return played_at_problem(when)


def _winner_problem(text: str) -> str | None:
    return None if text in _WINNER_CODES else f"must be one of 'a', 'b', 'draw', got {text!r}"


def _count_value(text: str) -> int | str:
    """The count, or an error message."""
    if not text:
        return "must not be empty"
    if not (text.isascii() and text.isdigit()):
        return f"must be a non-negative integer, got {text!r}"
    value = int(text)
    if value > MAX_COUNT:
        return f"must be <= {MAX_COUNT}, got {value}"
    return value


# ---------------------------------------------------------------------------- CSV


def _raise_if(field: str, problem: str | None) -> None:
    if problem is not None:
        raise HistoryError(field, problem)


def _json_text(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise HistoryError(field, f"must be a string, got {type(value).__name__}")
    return value


def _json_count(field: str, value: object) -> int:
    try:
        return check_count(field, value)
    except ValidationError as exc:
        raise HistoryError(field, exc.reason) from None


def _as_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise HistoryError("(file)", f"not valid UTF-8 (byte {exc.start})", line=line) from exc


# ---------------------------------------------------------------------------- value checks
# Each returns an error message, or None when the text is valid. They are applied to distinct
# values only, so that a file of a million rows pays for a few thousand checks. Ids are checked
# by the one id rule (sedma_elo.core.ids) after NFC normalisation.


#: The id check of every history reader (``core.ids``), named for the field tables.
_id_problem = id_problem
