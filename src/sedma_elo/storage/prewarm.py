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

The relations go in the order the reads need them: every index first (a read's lookups go through
them; smallest first), then the small tables (``players``, ``player_ratings``, ``rating_counts``,
``career_states``), then the two large heaps, ``matches`` and the partition, each from its newest
blocks back (rows are appended in sequence order, so the end of a heap holds the latest matches).
On a server whose memory is smaller than these relations, reading all of them would push the first
ones out again; ``max_bytes`` bounds the read: what does not fit whole among the indexes and small
tables is left out, and the large heaps share what is left in proportion to their sizes.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.exc import DBAPIError

from ..errors import DatabaseError, ValidationError
from .database import Database
from .partitions import partition_name
from .urls import sqlite_path

__all__ = ["READ_TABLES", "prewarm"]

#: The tables (besides the active version's partition of ``rating_changes``) whose blocks and
#: indexes the service's reads touch.
READ_TABLES = ("matches", "players", "player_ratings", "rating_counts", "career_states")

#: The large heaps, read last and from their end (besides the active version's partition).
_LARGE = ("matches",)

_RELATIONS = (
    "SELECT c.relname, false, pg_relation_size(c.oid) FROM pg_class c WHERE c.relname = ANY(%s)"
    " AND c.relkind = 'r' UNION ALL SELECT i.relname, true, pg_relation_size(i.oid) FROM pg_index x"
    " JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid WHERE t.relname = ANY(%s)"
)
_CHUNK = 1 << 20


def prewarm(db: Database, max_bytes: int | None = None) -> list[tuple[str, int]]:
    """Read the relations the service's reads use (see the module docstring) once, at most
    ``max_bytes`` in all if given (PostgreSQL only); return each one read, with the bytes read, in
    the order read.

    Raises:
        ValidationError: ``max_bytes`` below 1, or given for a SQLite database (its file is read
            whole).
        DatabaseError: ``pg_prewarm`` cannot be created by this role (the message says what to
            ask for), or the SQLite file cannot be read.
    """
    if max_bytes is not None and max_bytes < 1:
        raise ValidationError("max_bytes", "must be at least 1")
    path = sqlite_path(db.url)
    if path is not None:
        if max_bytes is not None:
            raise ValidationError("max_bytes", "applies to PostgreSQL only: a SQLite file is read whole")
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
        large = {*_LARGE, *([partition_name(int(active[0]))] if active else [])}
        tables = [*READ_TABLES, *large]
        block = int(raw.execute("SELECT current_setting('block_size')").fetchone()[0])
        rows = raw.execute(_RELATIONS, (tables, tables)).fetchall()
        sizes = {str(n): (bool(index), int(size)) for n, index, size in rows}
        done = []
        for name, take in _plan(sizes, large, block, max_bytes):
            row = raw.execute(_PREWARM, {"name": name, "block": block, "take": take}).fetchone()
            if row is not None:  # None: emptied since its size was read
                done.append((name, int(row[0]) * block))
        conn.rollback()
    return done


# The last ``take`` blocks of a relation (all of them if ``take`` is null), as it is now: a heap
# that a vacuum shortened since its size was read is read to its new end.
_PREWARM = (
    "SELECT pg_prewarm(r, 'read', 'main', greatest(n - coalesce(%(take)s, n), 0), n - 1) FROM"
    " (SELECT %(name)s::regclass AS r, pg_relation_size(%(name)s::regclass) / %(block)s AS n) s WHERE n > 0"
)


def _plan(
    sizes: dict[str, tuple[bool, int]], large: set[str], block: int, max_bytes: int | None
) -> list[tuple[str, int | None]]:
    """The relations to read, in order, each with how many of its last blocks to read (None: all);
    ``sizes``: name -> (is an index, bytes). See the module docstring. Empty relations are left out."""
    small = sorted((n for n in sizes if n not in large), key=lambda n: (not sizes[n][0], sizes[n][1], n))
    left = float("inf") if max_bytes is None else max_bytes
    plan: list[tuple[str, int | None]] = []
    for name in small:
        size = sizes[name][1]
        if 0 < size <= left:
            plan.append((name, None))
            left -= size
    heaps = sorted(n for n in large if n in sizes and sizes[n][1] > 0)
    total = sum(sizes[n][1] for n in heaps)
    for name in heaps:
        if left >= total:
            plan.append((name, None))
        elif (take := int(left * sizes[name][1] / total) // block) > 0:
            plan.append((name, take))
    return plan


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
