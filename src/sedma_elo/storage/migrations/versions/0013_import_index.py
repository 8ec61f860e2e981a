"""Repair: every version's partition of ``rating_changes`` has its part of the sequence index.

``sedma-elo import`` into an empty PostgreSQL ledger (from migration 0012 until this one) dropped
the parent's two indexes and built them again from their catalog definitions. The primary key came
back on every partition; ``ix_rating_changes_sequence``'s definition reads ``ON ONLY`` the parent,
so it came back invalid and on none of them. The imported version then read one match's changes
(a repeated POST's answer, an explanation, verify's ranges) by a scan of all its changes: 548 ms a
read at 10 M matches, against 0.1-0.4 ms by the index.

The upgrade builds the missing index on each such partition (named as ``storage/partitions.py``
names it) and attaches it to the parent's, which is valid again once every partition has its part.
A ledger without the fault, and SQLite, are left as they are. A build locks that partition against
writes (reads go on): 15.3 s for the 21 M changes of the 10 M league. The downgrade keeps the indexes (0012's
schema has them).

Revision ID: 0013_import_index
Revises: 0012_partitions
"""

from __future__ import annotations

from alembic import op

revision = "0013_import_index"
down_revision = "0012_partitions"
branch_labels = None
depends_on = None

# Frozen here (not imported from storage/partitions.py, whose later changes must not change this).
_INDEX_COLUMNS = "version_id, sequence, rating_before, rating_after"
_MISSING = (
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
    " WHERE i.inhparent = 'rating_changes'::regclass AND NOT EXISTS ("
    " SELECT 1 FROM pg_inherits x JOIN pg_index ix ON ix.indexrelid = x.inhrelid"
    " WHERE x.inhparent = 'ix_rating_changes_sequence'::regclass AND ix.indrelid = c.oid)"
    " ORDER BY c.relname"
)


def upgrade() -> None:
    """Build and attach the sequence index of each partition without one."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    names = [str(n) for n in bind.exec_driver_sql(_MISSING).scalars()]
    if names:
        op.execute("SET LOCAL maintenance_work_mem = '256MB'")  # each build: one sort in memory
    for name in names:
        op.execute(f"CREATE INDEX {name}_sequence ON {name} ({_INDEX_COLUMNS}) INCLUDE (player_key)")
        op.execute(f"ALTER INDEX ix_rating_changes_sequence ATTACH PARTITION {name}_sequence")


def downgrade() -> None:
    """Nothing: the indexes belong to 0012's schema too."""
