"""The player page's rank and summary: ``rating_counts``, ``career_states``, ``rating_versions.rewrites``.

* ``rating_counts`` (version, rating) -> players: the rank of a player is the sum over the higher
  ratings plus the ties before them by id. Counting the players above instead read ~735,000 index
  entries for a mid-table player of a 1,000,000-player version (157-185 ms). Filled here by one
  ``GROUP BY`` over ``player_ratings``.
* ``career_states`` (version, player) -> a career summary folded through a sequence, which a read
  extends by the newer matches only. Empty at first: reads fill it.
* ``rating_versions.rewrites``: bumped by a void in every version it rebuilds; a stored state made
  under another count is not used.

Revision ID: 0011_page
Revises: 0010_verify2
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_page"
down_revision = "0010_verify2"
branch_labels = None
depends_on = None

_SEQ = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    """Add the column and both tables, and count every version's players by rating."""
    # Plain ALTER TABLE on both databases (SQLite >= 3.35 drops a column too): a batch copy of
    # rating_versions would drop the table under player_ratings' foreign key.
    op.add_column("rating_versions", sa.Column("rewrites", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "rating_counts",
        sa.Column("version_id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("rating", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("players", sa.Integer(), nullable=False),
    )
    op.create_table(
        "career_states",
        sa.Column("version_id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("player_key", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("through", _SEQ, nullable=False),
        sa.Column("rewrites", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
    )
    op.execute(
        "INSERT INTO rating_counts (version_id, rating, players)"
        " SELECT version_id, rating, count(*) FROM player_ratings GROUP BY version_id, rating"
    )


def downgrade() -> None:
    """Drop both tables and the column."""
    op.drop_table("career_states")
    op.drop_table("rating_counts")
    op.drop_column("rating_versions", "rewrites")
