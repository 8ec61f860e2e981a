"""The career read's covering index: ``ix_rating_changes_sequence`` also carries ``player_key`` (PostgreSQL).

A player page reads, for each of the player's matches, every slot's rating before it. On
PostgreSQL that took one primary-key probe per slot (196,000 buffers for a 10,174-match career in
a 1,000,000-match ledger); with ``player_key`` in the sequence index one index-only probe per match
gives all of them (``Ledger.player_career``, 71,000 buffers with the rest of the statement). The
key columns stay ``(version_id, sequence, rating_before)``; ``player_key`` is an ``INCLUDE``
column, and the index tuple keeps its size (the 4 bytes fill alignment padding).

On SQLite nothing changes: ``rating_changes`` is a WITHOUT ROWID table, so its secondary index
already holds the primary key, ``player_key`` included.

Revision ID: 0009_reads
Revises: 0008_importfast
"""

from __future__ import annotations

from alembic import op

revision = "0009_reads"
down_revision = "0008_importfast"
branch_labels = None
depends_on = None

_NAME = "ix_rating_changes_sequence"
_KEY = ["version_id", "sequence", "rating_before"]


def upgrade() -> None:
    """Rebuild the sequence index with ``INCLUDE (player_key)`` (PostgreSQL only)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_index(_NAME, table_name="rating_changes")
    op.create_index(_NAME, "rating_changes", _KEY, postgresql_include=["player_key"])


def downgrade() -> None:
    """The sequence index without the included column again (PostgreSQL only)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_index(_NAME, table_name="rating_changes")
    op.create_index(_NAME, "rating_changes", _KEY)
