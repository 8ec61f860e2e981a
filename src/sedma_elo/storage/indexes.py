"""Whether the database's indexes are all there and usable: what ``verify`` reports beside ratings.

A missing or unusable index changes no answer, only how long it takes. Stop 41 (2026-12-06)
found every PostgreSQL ledger filled by ``sedma-elo import`` reading one match's changes by a
scan of its whole version (548 ms at 10 M matches, 0.1 ms by the index): the import had built
the sequence index again on the partitioned parent alone, where PostgreSQL keeps it invalid until
every partition has its part. PostgreSQL also leaves an index invalid after a failed or cancelled
``CREATE INDEX CONCURRENTLY`` or ``REINDEX CONCURRENTLY``, and an operator may drop one.
"""

from __future__ import annotations

from sqlalchemy import Connection

from .schema import metadata

__all__ = ["index_faults"]

_PG_INDEXES = (
    "SELECT c.relname, t.relname, i.indisvalid AND i.indisready FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid"
    " WHERE c.relnamespace = current_schema()::regnamespace"
)
_SQLITE_INDEXES = "SELECT name, tbl_name, 1 FROM sqlite_master WHERE type = 'index'"


def index_faults(conn: Connection) -> list[str]:
    """One sentence for each fault of the indexes of ``conn``'s database, in name order (empty: none).

    Faults: an index that :mod:`.schema` declares is missing; on PostgreSQL, an index of the
    current schema is invalid or not ready (the planner does not use it). Reads the catalogs only.
    """
    pg = conn.dialect.name == "postgresql"
    rows = conn.exec_driver_sql(_PG_INDEXES if pg else _SQLITE_INDEXES)
    found = {str(n): (str(t), bool(ok)) for n, t, ok in rows}
    faults: dict[str, str] = {}
    for table in metadata.tables.values():
        for index in table.indexes:
            name = str(index.name)
            if name not in found:
                faults[name] = f"index {name} of {table.name} is missing: its reads scan the table instead"
    for name, (owner, ok) in found.items():
        if not ok:
            faults[name] = (
                f"index {name} of {owner} is not valid, so PostgreSQL does not use it (a build that"
                " failed, or a partitioned table's index that a partition lacks): docs/service.md,"
                ' "Indexes"'
            )
    return [faults[n] for n in sorted(faults)]
