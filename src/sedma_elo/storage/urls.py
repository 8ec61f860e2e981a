"""Database URLs: the default, their normal and libpq forms, the check of what this project runs on,
and a SQLite URL's file.

The CLI's commands and ``sedma-elo worker`` check a user's URL with :func:`check_database_url`
(through :func:`~.database.open_checked`) before anything is opened; :func:`~.database.open_database`
itself refuses an in-memory SQLite database, which keeps no ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..errors import ValidationError

__all__ = [
    "DEFAULT_DATABASE_URL",
    "check_database_url",
    "in_memory_refused",
    "is_in_memory",
    "libpq_url",
    "normalize_url",
    "sqlite_path",
]

DEFAULT_DATABASE_URL = "sqlite:///./sedma-elo.db"


def normalize_url(url: str | None) -> str:
    """The URL to use: ``None`` or empty means :data:`DEFAULT_DATABASE_URL`; PostgreSQL gets psycopg 3."""
    if not url:
        return DEFAULT_DATABASE_URL
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def libpq_url(url: str) -> str:
    """The libpq form (``postgresql://...``) of a PostgreSQL URL, for psycopg used directly.

    Raises:
        sqlalchemy.exc.ArgumentError: ``url`` is not a database URL.
    """
    return make_url(normalize_url(url)).set(drivername="postgresql").render_as_string(hide_password=False)


def check_database_url(url: str | None) -> str:
    """The normalised URL (see :func:`normalize_url`) if it names a database this project runs on.

    Raises:
        ValidationError: not a URL SQLAlchemy parses (``sqlite:/relative.db``: a SQLite URL needs
            three slashes), an in-memory SQLite database, another database than SQLite or
            PostgreSQL, or a PostgreSQL driver other than psycopg 3 (field ``database_url``).
    """
    normal = normalize_url(url)
    try:
        parsed = make_url(normal)
    except ArgumentError:
        raise ValidationError("database_url", f"not a database URL: {url!r} ({_URL_FORMS})") from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend == "sqlite":
        if driver not in ("", "pysqlite"):
            raise ValidationError("database_url", f"unsupported SQLite driver {driver!r} ({_URL_FORMS})")
        if parsed.host:
            raise ValidationError(
                "database_url", f"a SQLite URL names a file, not a host: {url!r} ({_URL_FORMS})"
            )
        if is_in_memory(parsed.database, parsed.query):
            raise in_memory_refused(url)
    elif backend == "postgresql":
        if driver != "psycopg":
            raise ValidationError(
                "database_url", f"unsupported PostgreSQL driver {driver!r}: use postgresql://"
            )
    else:
        raise ValidationError("database_url", f"unsupported database {backend!r} ({_URL_FORMS})")
    return normal


_URL_FORMS = "use sqlite:///relative/path.db, sqlite:////absolute/path.db or postgresql://user@host/db"


def in_memory_refused(url: str | None) -> ValidationError:
    """The error for ``url``, an in-memory SQLite database (field ``database_url``)."""
    return ValidationError(
        "database_url",
        f"{url!r} is an in-memory SQLite database, which keeps no ledger (each connection"
        f" opens an empty one of its own): name a file ({_URL_FORMS})",
    )


def is_in_memory(database: str | None, query: Mapping[str, object]) -> bool:
    """Whether SQLite opens ``database`` (a URL's path, with its ``query``) in memory: no name,
    ``:memory:``, or as a URI (``uri=true``) ``file::memory:`` or ``mode=memory``."""
    if not database or database == ":memory:":
        return True
    as_uri = str(query.get("uri", "")).lower() in ("true", "1")
    return as_uri and (database.startswith("file::memory:") or query.get("mode") == "memory")


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL, or None (PostgreSQL, or an in-memory SQLite database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or is_in_memory(parsed.database, parsed.query):
        return None
    return Path(str(parsed.database)).expanduser()
