"""PostgreSQL: ``rating_changes`` partitioned by version (``storage/partitions.py``).

A re-rate fills its new version's table without indexes and builds them afterwards, one sort
each, instead of inserting every row into two b-trees. The table becomes a parent partitioned by
``LIST (version_id)`` with the same primary key and sequence index; each existing version's rows
move to their own table, set-based (one ``INSERT ... SELECT`` a version, in the primary key's
order, then the two indexes built and the table attached). The old table is dropped. SQLite:
nothing (one table, as before).

The downgrade puts the rows back into one plain table with the same key and index.

Revision ID: 0012_partitions
Revises: 0011_page
"""

from __future__ import annotations

from alembic import op

revision = "0012_partitions"
down_revision = "0011_page"
branch_labels = None
depends_on = None

# Frozen here (not imported from storage/partitions.py, whose later changes must not change this).
_KEY_COLUMNS = "version_id, player_key, sequence"
_INDEX_COLUMNS = "version_id, sequence, rating_before, rating_after"
_COLUMNS = "version_id, player_key, sequence, rating_before, rating_after"
_TYPES = (
    "version_id integer NOT NULL, player_key integer NOT NULL, sequence bigint NOT NULL,"
    " rating_before integer NOT NULL, rating_after integer NOT NULL"
)
_KEY = f"CONSTRAINT rating_changes_pkey PRIMARY KEY ({_KEY_COLUMNS})"
_INDEX = f"CREATE INDEX ix_rating_changes_sequence ON rating_changes ({_INDEX_COLUMNS}) INCLUDE (player_key)"


def _partition(vid: int) -> None:
    """Version ``vid``'s rows in a table of their own: filled bare, indexed once, attached."""
    name = f"rating_changes_v{vid}"
    op.execute(f"CREATE TABLE {name} (LIKE rating_changes INCLUDING DEFAULTS)")
    # The CHECK lets the attach skip its scan of the rows; redundant once attached.
    op.execute(f"ALTER TABLE {name} ADD CONSTRAINT {name}_version CHECK (version_id = {vid})")
    op.execute(
        f"INSERT INTO {name} ({_COLUMNS}) SELECT {_COLUMNS} FROM rating_changes_old"
        f" WHERE version_id = {vid} ORDER BY {_KEY_COLUMNS}"
    )
    op.execute(f"ALTER TABLE {name} ADD CONSTRAINT {name}_pkey PRIMARY KEY ({_KEY_COLUMNS})")
    op.execute(f"CREATE INDEX {name}_sequence ON {name} ({_INDEX_COLUMNS}) INCLUDE (player_key)")
    op.execute(f"ALTER TABLE rating_changes ATTACH PARTITION {name} FOR VALUES IN ({vid})")
    op.execute(f"ALTER TABLE {name} DROP CONSTRAINT {name}_version")


def _set_aside() -> None:
    """Rename the current table and its key and index out of the way of the new ones."""
    op.execute("ALTER TABLE rating_changes RENAME TO rating_changes_old")
    op.execute(
        "ALTER TABLE rating_changes_old RENAME CONSTRAINT rating_changes_pkey TO rating_changes_old_pkey"
    )
    op.execute("ALTER INDEX ix_rating_changes_sequence RENAME TO ix_rating_changes_old_sequence")


def upgrade() -> None:
    """One partition per version, each filled from the old table and indexed once."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    _set_aside()
    op.execute(f"CREATE TABLE rating_changes ({_TYPES}, {_KEY}) PARTITION BY LIST (version_id)")
    op.execute(_INDEX)
    ids = [int(v) for v in bind.exec_driver_sql("SELECT id FROM rating_versions ORDER BY id").scalars()]
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")  # each index build: one sort in memory
    for vid in ids:
        _partition(vid)
    # A change of a version without a row would have no partition (versions are never deleted).
    stray = bind.exec_driver_sql(
        "SELECT count(*) FROM rating_changes_old o WHERE NOT EXISTS"
        " (SELECT 1 FROM rating_versions v WHERE v.id = o.version_id)"
    ).scalar()
    if stray:
        raise RuntimeError(f"{stray} rating changes of versions that do not exist: upgrade stopped")
    op.execute("DROP TABLE rating_changes_old")


def downgrade() -> None:
    """One plain table again, with the same rows, key and index."""
    if op.get_bind().dialect.name != "postgresql":
        return
    _set_aside()
    op.execute(f"CREATE TABLE rating_changes ({_TYPES})")
    op.execute(
        f"INSERT INTO rating_changes ({_COLUMNS}) SELECT {_COLUMNS} FROM rating_changes_old"
        f" ORDER BY {_KEY_COLUMNS}"
    )
    op.execute(f"ALTER TABLE rating_changes ADD {_KEY}")
    op.execute(_INDEX)
    op.execute("DROP TABLE rating_changes_old")
