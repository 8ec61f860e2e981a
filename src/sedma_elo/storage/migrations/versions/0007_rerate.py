"""``rating_changes`` without foreign keys: derived rows, written a million at a time by a rebuild.

A rating change is derived (the fold of the non-voided ledger under a version's rules; ``verify``
recomputes and compares every one), and it is written only by the ledger's writers, which take
the version and the player keys from the rows they have just read. The two foreign keys (to
``rating_versions`` and ``players``) checked every inserted row: on PostgreSQL a ``FOR KEY SHARE``
look-up per row per key, a third of a re-rate's server time (see docs/service.md, "Bulk paths").
Versions are never deleted; a player key is never deleted either.

On SQLite a constraint cannot be dropped: the table is rebuilt (same rows, same clustering, same
index). The downgrade puts the foreign keys back.

Revision ID: 0007_rerate
Revises: 0006_queue
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_rerate"
down_revision = "0006_queue"
branch_labels = None
depends_on = None

_COLUMNS = "version_id, player_key, sequence, rating_before, rating_after"
_PG_KEYS = (
    ("rating_changes_version_id_fkey", "rating_versions", "version_id"),
    ("rating_changes_player_key_fkey", "players", "player_key"),
)


def _rebuild_sqlite(foreign_keys: bool) -> None:
    """Rebuild SQLite's ``rating_changes`` with or without its foreign keys (same rows and index)."""
    op.rename_table("rating_changes", "rating_changes_old")
    op.drop_index("ix_rating_changes_sequence", "rating_changes_old")
    version = [sa.ForeignKey("rating_versions.id")] if foreign_keys else []
    player = [sa.ForeignKey("players.id")] if foreign_keys else []
    op.create_table(
        "rating_changes",
        sa.Column("version_id", sa.Integer, *version, primary_key=True),
        sa.Column("player_key", sa.Integer, *player, primary_key=True),
        sa.Column("sequence", sa.Integer, primary_key=True),
        sa.Column("rating_before", sa.Integer, nullable=False),
        sa.Column("rating_after", sa.Integer, nullable=False),
        sqlite_with_rowid=False,
    )
    op.execute(
        f"INSERT INTO rating_changes ({_COLUMNS}) SELECT {_COLUMNS} FROM rating_changes_old"
        " ORDER BY version_id, player_key, sequence"
    )
    op.drop_table("rating_changes_old")
    op.create_index(
        "ix_rating_changes_sequence", "rating_changes", ["version_id", "sequence", "rating_before"]
    )


def upgrade() -> None:
    """Drop the foreign keys of ``rating_changes``."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        # By their names in the catalogue: PostgreSQL numbers a name taken by a set-aside table
        # (``rating_changes_version_id_fkey1`` after a downgrade and upgrade of 0005).
        names = bind.exec_driver_sql(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'rating_changes'::regclass AND contype = 'f'"
        ).scalars()
        for name in list(names):
            op.drop_constraint(name, "rating_changes", type_="foreignkey")
        return
    _rebuild_sqlite(foreign_keys=False)


def downgrade() -> None:
    """Put the foreign keys of ``rating_changes`` back."""
    if op.get_bind().dialect.name == "postgresql":
        for name, parent, column in _PG_KEYS:
            op.create_foreign_key(name, "rating_changes", parent, [column], ["id"])
        return
    _rebuild_sqlite(foreign_keys=True)
