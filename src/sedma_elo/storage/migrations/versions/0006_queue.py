"""Game analysis jobs on procrastinate (PostgreSQL): its schema, and a job for each waiting game.

On PostgreSQL the analysis of a posted game is a procrastinate job (``service/games/queue.py``),
deferred in the transaction that stores the game. This revision installs procrastinate's schema
(``procrastinate.schema.SchemaManager.get_schema()`` of the locked version: its tables, types and
functions, all named ``procrastinate_*``) and defers one job for each game still ``queued`` or
``analysing`` under the old in-table queue, so an upgrade loses no waiting game. A later
procrastinate release that changes its schema ships SQL migrations of its own
(``procrastinate schema --migrations-path``); they become a revision of ours then.

On SQLite nothing changes: the ``games`` table stays the job table there.

The downgrade puts every game being analysed back to ``queued`` (the in-table queue takes it
again) and drops procrastinate's objects.

Revision ID: 0006_queue
Revises: 0005_compact
"""

from __future__ import annotations

from alembic import op

revision = "0006_queue"
down_revision = "0005_compact"
branch_labels = None
depends_on = None

# Frozen here, as the job the service defers (service/games/queue.py: QUEUE, TASK_NAME).
_QUEUE = "games"
_TASK = "sedma_elo.analyse_game"


def upgrade() -> None:
    """Install procrastinate's schema and defer a job for each waiting game (PostgreSQL only)."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    from procrastinate.schema import SchemaManager

    raw = bind.connection.driver_connection  # psycopg: the schema text is not a parameter template
    assert raw is not None
    raw.execute(SchemaManager.get_schema())
    raw.execute(
        "SELECT procrastinate_defer_jobs_v1(array_agg(ROW(%s, %s, 0, match_id, NULL,"
        " jsonb_build_object('match_id', match_id), NULL)::procrastinate_job_to_defer_v1"
        " ORDER BY created_at, match_id))"
        " FROM games WHERE status IN ('queued', 'analysing') HAVING count(*) > 0",
        (_QUEUE, _TASK),
    )
    op.execute(
        "UPDATE games SET status = 'queued', claim = NULL, lease_until = NULL WHERE status = 'analysing'"
    )


def downgrade() -> None:
    """Drop procrastinate's objects; games being analysed wait again in the in-table queue."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    op.execute(
        "UPDATE games SET status = 'queued', claim = NULL, lease_until = NULL WHERE status = 'analysing'"
    )
    for table in (
        "procrastinate_events",
        "procrastinate_periodic_defers",
        "procrastinate_jobs",
        "procrastinate_workers",
    ):
        op.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
    functions = bind.exec_driver_sql(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = current_schema() AND left(p.proname, 14) = 'procrastinate_'"
    ).scalars()
    for signature in list(functions):
        op.execute(f"DROP FUNCTION IF EXISTS {signature} CASCADE")
    for kind in ("procrastinate_job_to_defer_v1", "procrastinate_job_event_type", "procrastinate_job_status"):
        op.execute(f"DROP TYPE IF EXISTS {kind} CASCADE")
