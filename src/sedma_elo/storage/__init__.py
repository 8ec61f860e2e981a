"""Storage: the SQLAlchemy tables, engines for SQLite and PostgreSQL, and the bundled migrations."""

from .checkpoint import WAL_BOUND_PAGES, WalCheckpointer
from .database import Database, WriteLock, open_database
from .indexes import index_faults
from .migrate import downgrade, upgrade
from .reader import AsyncReader
from .urls import DEFAULT_DATABASE_URL, libpq_url, normalize_url

__all__ = [
    "DEFAULT_DATABASE_URL",
    "WAL_BOUND_PAGES",
    "AsyncReader",
    "Database",
    "WalCheckpointer",
    "WriteLock",
    "downgrade",
    "index_faults",
    "libpq_url",
    "normalize_url",
    "open_database",
    "upgrade",
]
