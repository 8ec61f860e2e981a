"""PostgreSQL: ``rating_changes`` partitioned by version, one table per version (migration 0012).

A re-rate writes a whole new version (the ATP file: 1.2 M changes). Inserted into an indexed
table, each row was two b-tree insertions (the primary key and the sequence index): most of a
re-rate's wall on PostgreSQL. With one partition per version the new version's table is filled
without an index (binary ``COPY ... FREEZE``: the table is new in the transaction, so its rows are
written frozen and all-visible, ready for index-only scans), then its two indexes are built, one
sort each, and the table is attached (``ATTACH PARTITION`` locks the parent only ``SHARE UPDATE
EXCLUSIVE``: reads and writes of the other versions go on). Every other write (a new match, a
void, an activate's catching up) goes through the parent as before.

Every version has its partition from the transaction that creates it on (there is no default
partition: attaching beside one would lock it ``ACCESS EXCLUSIVE`` and scan it). Each function
returns the statements; the ledger runs them in its transaction (migration 0012 holds its own
frozen copy). SQLite keeps one table.
"""

from __future__ import annotations

import re

__all__ = [
    "INDEX_COLUMNS",
    "INDEX_INCLUDE",
    "KEY_COLUMNS",
    "attach_sql",
    "create_sql",
    "finish_sql",
    "index_sql",
    "is_version_table",
    "partition_name",
    "partition_sql",
]

#: ``rating_changes``' primary key and sequence index (schema.py declares the same).
KEY_COLUMNS = ("version_id", "player_key", "sequence")
INDEX_COLUMNS = ("version_id", "sequence", "rating_before", "rating_after")
INDEX_INCLUDE = ("player_key",)
#: Memory for each index build (``SET LOCAL``: this transaction only): one sort in memory.
BUILD_MEMORY = "256MB"

_NAME = re.compile(r"rating_changes_v[0-9]+")


def partition_name(version_id: int) -> str:
    """The table holding ``version_id``'s rating changes."""
    return f"rating_changes_v{int(version_id)}"


def is_version_table(name: str) -> bool:
    """Whether ``name`` is a version's partition (not declared in schema.py: made per version)."""
    return _NAME.fullmatch(name) is not None


def create_sql(version_id: int) -> list[str]:
    """A bare table for ``version_id``'s changes: the parent's columns, no index; a CHECK that lets
    the attach skip its scan of the rows."""
    name, v = partition_name(version_id), int(version_id)
    return [
        f"CREATE TABLE {name} (LIKE rating_changes INCLUDING DEFAULTS)",
        f"ALTER TABLE {name} ADD CONSTRAINT {name}_version CHECK (version_id = {v})",
    ]


def index_sql(version_id: int) -> list[str]:
    """Build the table's primary key and sequence index (as the parent's: the attach adopts them)."""
    name = partition_name(version_id)
    return [
        f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'",
        f"ALTER TABLE {name} ADD CONSTRAINT {name}_pkey PRIMARY KEY ({', '.join(KEY_COLUMNS)})",
        f"CREATE INDEX {name}_sequence ON {name} ({', '.join(INDEX_COLUMNS)})"
        f" INCLUDE ({', '.join(INDEX_INCLUDE)})",
    ]


def attach_sql(version_id: int) -> list[str]:
    """Attach the indexed table as ``version_id``'s partition; its CHECK is then redundant."""
    name, v = partition_name(version_id), int(version_id)
    return [
        f"ALTER TABLE rating_changes ATTACH PARTITION {name} FOR VALUES IN ({v})",
        f"ALTER TABLE {name} DROP CONSTRAINT {name}_version",
    ]


def finish_sql(version_id: int) -> list[str]:
    """A bare table of :func:`create_sql`, filled or not, made ``version_id``'s partition: indexed
    first, then attached (the attach adopts the indexes instead of building its own)."""
    return [*index_sql(version_id), *attach_sql(version_id)]


def partition_sql(version_id: int) -> list[str]:
    """An empty partition for a new version, ready for writes (create, index, attach)."""
    return [*create_sql(version_id), *finish_sql(version_id)]
