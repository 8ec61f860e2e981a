"""The change feed and webhooks: ``change_events`` (feed and outbox) and ``webhook_subscriptions``.

Revision ID: 0004_feed
Revises: 0003_games
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_feed"
down_revision = "0003_games"
branch_labels = None
depends_on = None


def _seq() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Create the feed's event table and the subscriptions table."""
    op.create_table(
        "change_events",
        sa.Column("sequence", _seq(), primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("version_id", sa.Integer, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "webhook_subscriptions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("secret", sa.String(200), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("delivered_through", _seq(), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.Float, nullable=False),
        sa.Column("last_error", sa.String(500), nullable=True),
        sa.Column("lease_owner", sa.String(100), nullable=True),
        sa.Column("lease_until", sa.Float, nullable=True),
    )


def downgrade() -> None:
    """Drop both tables."""
    op.drop_table("webhook_subscriptions")
    op.drop_table("change_events")
