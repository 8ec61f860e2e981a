"""The initial schema: ratings versions, the ledger, ratings, rating changes and API keys.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _seq() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Create every table, the rank index and (on PostgreSQL) the ledger sequence."""
    op.create_table(
        "rating_versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("rules_label", sa.String(210), nullable=False),
        sa.Column("rules_toml", sa.Text, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "matches",
        sa.Column("sequence", _seq(), primary_key=True, autoincrement=False),
        sa.Column("match_id", sa.String(128), nullable=False, unique=True),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column("response", sa.Text, nullable=False),
        sa.Column("played_at", sa.String(40), nullable=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("rating_versions.id"), nullable=False),
        sa.Column("voided", sa.Boolean, nullable=False),
        sa.Column("void_reason", sa.String(500), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "player_ratings",
        sa.Column("version_id", sa.Integer, sa.ForeignKey("rating_versions.id"), primary_key=True),
        sa.Column("player_id", sa.String(128), primary_key=True),
        sa.Column("rating", sa.Integer, nullable=False),
        sa.Column("matches_played", sa.Integer, nullable=False),
        sa.Column("last_sequence", _seq(), nullable=False),
    )
    op.create_index(
        "ix_player_ratings_rank",
        "player_ratings",
        ["version_id", sa.text("rating DESC"), "player_id", "matches_played"],
    )
    op.create_table(
        "rating_changes",
        sa.Column("version_id", sa.Integer, sa.ForeignKey("rating_versions.id"), primary_key=True),
        sa.Column("sequence", _seq(), primary_key=True),
        sa.Column("player_id", sa.String(128), primary_key=True),
        sa.Column("rating_before", sa.Integer, nullable=False),
        sa.Column("rating_after", sa.Integer, nullable=False),
    )
    op.create_index("ix_rating_changes_player", "rating_changes", ["version_id", "player_id", "sequence"])
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("scope", sa.String(10), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("revoked_at", sa.String(40), nullable=True),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE SEQUENCE ledger_sequence")


def downgrade() -> None:
    """Drop everything the upgrade created."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP SEQUENCE ledger_sequence")
    for table in ("api_keys", "rating_changes", "player_ratings", "matches", "rating_versions"):
        op.drop_table(table)
