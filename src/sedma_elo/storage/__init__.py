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

__all__ = [
    "DEFAULT_DATABASE_URL",
    "Database",
    "WriteLock",
    "downgrade",
    "normalize_url",
    "open_database",
    "upgrade",
]
