"""Reading what the service reads into the operating system's cache, before it serves.

The 10 M league's reads meet their p99 goals once the tables and indexes they touch are cached;
on a cold cache (a machine or server just started) the first minute's reads go to the disk, and
their p99s were 5-10x the goals (docs/service.md, "The ledger at scale"). :func:`prewarm` reads
those relations once, sequentially, so the first requests find them cached.

On PostgreSQL it uses the ``pg_prewarm`` extension (shipped with PostgreSQL; ``CREATE EXTENSION``
needs a role allowed to create it) in its ``read`` mode: each block read into the operating
system's cache (the server's own buffers are far smaller than a large ledger). The relations are
the tables the reads join (``matches``, ``players``, ``player_ratings``, ``rating_counts``,
``career_states`` and the active version's ``rating_changes`` partition) and every index of them;
the change feed and the inactive versions are left out. On SQLite the database file is read.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.exc import DBAPIError

from ..errors import DatabaseError
from .database import Database
from .partitions import partition_name
from .urls import sqlite_path

__all__ = ["READ_TABLES", "prewarm"]

#: The tables (besides the active version's partition of ``rating_changes``) whose blocks and
#: indexes the service's reads touch.
READ_TABLES = ("matches", "players", "player_ratings", "rating_counts", "career_states")

_RELATIONS = (
    "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND c.relkind = 'r'"
    " UNION ALL SELECT i.relname FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid"
    " JOIN pg_class i ON i.oid = x.indexrelid WHERE t.relname = ANY(%s)"
)
_CHUNK = 1 << 20


def prewarm(db: Database) -> list[tuple[str, int]]:
    """Read the relations the service's reads use (see the module docstring) once; return each
    one's name and the bytes read, in the order read.

    Raises:
        DatabaseError: ``pg_prewarm`` cannot be created by this role (the message says what to
            ask for), or the SQLite file cannot be read.
    """
    path = sqlite_path(db.url)
    if path is not None:
        return [(path.name, _read_file(path))]
    with db.write.begin() as conn:
        try:
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        except DBAPIError as exc:
            raise DatabaseError(
                "cannot create the pg_prewarm extension with this role: ask the database's owner"
                f" to run CREATE EXTENSION pg_prewarm ({str(exc.orig).strip().splitlines()[0]})"
            ) from exc
    with db.read.connect() as conn:
        raw = conn.connection.driver_connection
        assert raw is not None
        active = raw.execute("SELECT id FROM rating_versions WHERE active").fetchone()
        tables = [*READ_TABLES, *([partition_name(int(active[0]))] if active else [])]
        names = [str(r[0]) for r in raw.execute(_RELATIONS, (tables, tables)).fetchall()]
        block = int(raw.execute("SELECT current_setting('block_size')").fetchone()[0])
        done = []
        for name in names:
            blocks = raw.execute("SELECT pg_prewarm(%s::regclass, 'read')", (name,)).fetchone()[0]
            done.append((name, int(blocks) * block))
        conn.rollback()
    return done


def _read_file(path: Path) -> int:
    """Read ``path`` through once (into the page cache); the bytes read."""
    total = 0
    try:
        with path.open("rb", buffering=0) as f:
            while chunk := f.read(_CHUNK):
                total += len(chunk)
    except OSError as exc:
        raise DatabaseError(f"cannot read {path}: {exc.strerror}") from exc
    return total
