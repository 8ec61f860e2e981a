"""The ledger's rows without per-row foreign-key checks: ``matches`` drops its foreign keys.

``matches.a1``/``a2``/``b1``/``b2`` referred to ``players.id`` and ``matches.version_id`` to
``rating_versions.id`` through foreign keys, which PostgreSQL checks with one trigger a key a row:
on ``sedma-elo import``'s ``COPY`` of the ATP file those checks were the server's largest cost
(200,000 matches on a loaded machine: 40.6 s with them, 25.1 s without). Neither parent row is
ever deleted, so the keys only needed checking when a row is written, and every writer writes
keys it has just interned or read in the same transaction (``service/ledger/rows.py``,
``bulk_import.py``); ``verify`` checks the whole ledger's keys in one query (a key without its
player or version is reported). Data is unchanged.

On SQLite the table is rebuilt without the constraints (alembic's batch mode), the rows of
``kept_answers``, which refers to ``matches``, set aside meanwhile. The downgrade adds
the constraints back (on PostgreSQL, checking every row).

Revision ID: 0008_importfast
Revises: 0007_rerate
"""

from __future__ import annotations

from alembic import op

revision = "0008_importfast"
down_revision = "0007_rerate"
branch_labels = None
depends_on = None

_SLOTS = ("a1", "a2", "b1", "b2")
#: The foreign keys dropped: (column, parent table).
_KEYS = [*((slot, "players") for slot in _SLOTS), ("version_id", "rating_versions")]
#: Names for SQLite's unnamed constraints (alembic's batch mode finds them by these).
_NAMES = {"fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s"}


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _rebuild_sqlite(drop: bool) -> None:
    """Rebuild ``matches`` without (``drop``) or with its foreign keys. ``kept_answers`` refers to
    it: its rows wait in a temporary table meanwhile, since SQLite counts the rows the rebuild's
    ``DROP TABLE`` orphans as violations even once the new table holds their parents again."""
    op.execute("CREATE TEMPORARY TABLE kept_answers_aside AS SELECT * FROM kept_answers")
    op.execute("DELETE FROM kept_answers")
    if drop:
        with op.batch_alter_table("matches", recreate="always", naming_convention=_NAMES) as batch:
            for column, parent in _KEYS:
                batch.drop_constraint(f"fk_matches_{column}_{parent}", type_="foreignkey")
    else:
        with op.batch_alter_table("matches", recreate="always") as batch:
            for column, parent in _KEYS:
                batch.create_foreign_key(f"fk_matches_{column}_{parent}", parent, [column], ["id"])
    op.execute("INSERT INTO kept_answers SELECT * FROM kept_answers_aside")
    op.execute("DROP TABLE kept_answers_aside")


def upgrade() -> None:
    """Drop the foreign keys of ``matches``."""
    if _sqlite():
        _rebuild_sqlite(drop=True)
        return
    # By what they are, not by name: 0005_compact's renames left names that vary by history.
    found = op.get_bind().exec_driver_sql(
        "SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid = 'matches'::regclass"
        " AND confrelid IN ('players'::regclass, 'rating_versions'::regclass)"
    )
    for (name,) in found.fetchall():
        op.drop_constraint(name, "matches", type_="foreignkey")


def downgrade() -> None:
    """Add the foreign keys of ``matches`` back."""
    if _sqlite():
        _rebuild_sqlite(drop=False)
        return
    for column, parent in _KEYS:
        op.create_foreign_key(f"matches_{column}_fkey", "matches", parent, [column], ["id"])
