"""Storage: the SQLAlchemy tables, engines for SQLite and PostgreSQL, and the bundled migrations."""

from .database import (
    DEFAULT_DATABASE_URL,
    Database,
    WriteLock,
    downgrade,
    normalize_url,
    open_database,
    upgrade,
)
from .reader import AsyncReader

__all__ = [
    "DEFAULT_DATABASE_URL",
    "AsyncReader",
    "Database",
    "WriteLock",
    "downgrade",
    "normalize_url",
    "open_database",
    "upgrade",
]
