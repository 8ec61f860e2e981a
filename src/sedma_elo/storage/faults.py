"""Which driver errors mean "the database cannot serve now" rather than a bug: the one classifier.

A full disk (SQLite's ``SQLITE_FULL``, PostgreSQL's ``disk_full``), a connection that is lost,
refused or over the server's limit, a database locked past the busy timeout: each is turned into a
:class:`~sedma_elo.errors.StorageUnavailableError` with a short ``kind``, so the API can answer
503 with ``Retry-After`` and the log can count failures by kind instead of printing a traceback
per request. Any other error is left alone (it is a bug, or bad input handled elsewhere).
"""

from __future__ import annotations

import sqlite3

import psycopg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ..errors import StorageUnavailableError

__all__ = ["storage_unavailable"]

# SQLite primary result codes (https://sqlite.org/rescode.html); extended codes keep them in the low byte.
_SQLITE_KINDS = {
    5: "database busy",
    6: "database busy",
    10: "disk I/O error",
    13: "disk full",
    14: "cannot open",
}
# PostgreSQL SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
_PG_KINDS = {
    "53100": "disk full",
    "53200": "out of memory",
    "53300": "too many connections",
    "57P01": "connection lost",  # admin_shutdown: pg_terminate_backend, a fast shutdown
    "57P02": "connection lost",  # crash_shutdown
    "57P03": "database starting or stopping",  # cannot_connect_now
}
_RETRY_AFTER = {"disk full": 30.0, "out of memory": 10.0, "disk I/O error": 30.0}


def _kind(exc: BaseException) -> str | None:
    if isinstance(exc, PoolTimeout):
        return "connection pool exhausted"
    cause = exc.orig if isinstance(exc, DBAPIError) else exc
    if isinstance(cause, sqlite3.OperationalError):
        code = getattr(cause, "sqlite_errorcode", None)
        if isinstance(code, int):
            return _SQLITE_KINDS.get(code & 0xFF)
        text = str(cause)
        return "disk full" if "disk is full" in text else "database busy" if "locked" in text else None
    if isinstance(cause, psycopg.Error):
        state = cause.sqlstate or ""
        if state in _PG_KINDS:
            return _PG_KINDS[state]
        if state.startswith("08"):
            return "connection lost"
        if isinstance(cause, psycopg.OperationalError) and not state:
            # No SQLSTATE: the client library's own failure (refused, reset, timed out).
            return "connection lost"
    return None


def storage_unavailable(exc: BaseException) -> StorageUnavailableError | None:
    """The :class:`StorageUnavailableError` that ``exc`` amounts to, or None if it is not such a fault.

    ``exc`` may be the driver's error (``sqlite3``, ``psycopg``) or SQLAlchemy's wrapper of it.
    The message names the kind only: the driver's text can hold paths and statements.
    """
    kind = _kind(exc)
    if kind is None:
        return None
    return StorageUnavailableError(
        f"the database is unavailable ({kind}); nothing was stored, retry later",
        kind=kind,
        retry_after=_RETRY_AFTER.get(kind, 5.0),
    )
