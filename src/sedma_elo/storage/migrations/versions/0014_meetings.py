"""Stored career states hold their table of meetings as base64 rows, not a JSON list.

A player page's summary starts from the player's stored state (``career_states``, migration 0011)
and read its meetings (wins, draws, losses by opponent) from a flat JSON list into a dict of lists:
most of the summary's time for a 10,000-match career with 7,147 opponents. From this revision a
state's meetings are one base64 string of little-endian int32 rows (key, wins, draws, losses),
read into two arrays (``service/ledger/career_state.py``): the summary 3.1-3.7 ms instead of
6.1-7.3 ms (``benchmarks/bench_page_parts.py``, docs/web.md).

The code of this revision reads states in either form, so the upgrade changes nothing. Code
before it would misread a new one (a string where it expects a list), so the downgrade deletes
every stored state: they are derived, disposable data, and the next read of each page stores its
state again.

Revision ID: 0014_meetings
Revises: 0013_import_index
"""

from __future__ import annotations

from alembic import op

revision = "0014_meetings"
down_revision = "0013_import_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing to change: states in the earlier form are still read."""


def downgrade() -> None:
    """Delete every stored career state (the earlier code cannot read the new form)."""
    op.execute("DELETE FROM career_states")
