"""Game records and their analysis jobs (``POST /v1/games``): the ``games`` table.

Revision ID: 0003_games
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_games"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``games`` and the index the workers claim jobs through."""
    op.create_table(
        "games",
        sa.Column("match_id", sa.String(128), primary_key=True),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column("played_at", sa.String(40), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("analysis", sa.Text, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("claim", sa.String(64), nullable=True),
        sa.Column("lease_until", sa.Double, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_games_jobs", "games", ["status", "created_at"])
    if op.get_bind().dialect.name == "postgresql":  # ids compare by code point, as in 0002
        op.execute('ALTER TABLE games ALTER COLUMN match_id TYPE varchar(128) COLLATE "C"')


def downgrade() -> None:
    """Drop ``games`` (every stored record and analysis is lost)."""
    op.drop_index("ix_games_jobs", table_name="games")
    op.drop_table("games")
