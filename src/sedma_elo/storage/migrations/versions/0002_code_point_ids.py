"""Ids compare by code point on PostgreSQL too (``COLLATE "C"``), as they always did on SQLite.

Under a database's language collation the player search's index range missed ids: in Czech, where
"ch" sorts after "h", searching "c" did not find "chalupa". Leaderboard ties were also ordered
differently from SQLite. The columns keep their type; only the collation (and so the index order)
changes.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_ID_COLUMNS = (("matches", "match_id"), ("player_ratings", "player_id"), ("rating_changes", "player_id"))


def upgrade() -> None:
    """Give every id column the code point collation (PostgreSQL; SQLite already compares so)."""
    if op.get_bind().dialect.name == "postgresql":
        for table, column in _ID_COLUMNS:
            op.execute(f'ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar(128) COLLATE "C"')


def downgrade() -> None:
    """Back to the database's default collation."""
    if op.get_bind().dialect.name == "postgresql":
        for table, column in _ID_COLUMNS:
            op.execute(f'ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar(128) COLLATE "default"')
