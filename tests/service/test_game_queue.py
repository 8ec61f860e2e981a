"""Game analysis jobs on procrastinate (PostgreSQL): deferred with the game row, or not at all.

``test_game_workers.py`` kills workers that run these jobs; here the jobs themselves: one per
stored game, committed in the game's transaction, and migration 0006_queue's jobs for games that
waited in the old in-table queue.
"""

from __future__ import annotations

from typing import Any

import pytest
from games_helpers import bot_record, game_body

from needs import reset_pg
from sedma_elo.errors import ConflictError
from sedma_elo.service.games import GameIn, GameStore, check_game
from sedma_elo.service.games.queue import QUEUE, TASK_NAME, defer_in
from sedma_elo.storage import Database, downgrade, open_database, upgrade

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(pg_database: str) -> Any:
    """The session's PostgreSQL database, emptied and migrated."""
    reset_pg(pg_database)
    db = open_database(pg_database)
    yield db
    db.dispose()


def _jobs(db: Database) -> list[tuple[Any, ...]]:
    return db.query(
        "SELECT task_name, queue_name, lock, args->>'match_id', status FROM procrastinate_jobs ORDER BY id"
    )


def _submit(store: GameStore, match_id: str, seed: int) -> None:
    store.submit(check_game(GameIn.model_validate(game_body(match_id, bot_record(seed)))))


def test_a_stored_game_has_one_job_and_a_repeat_or_a_conflict_adds_none(pg: Database) -> None:
    """submit defers one todo job naming the game (locked by its id); a repeat or a conflict defers none."""
    store = GameStore(pg)
    _submit(store, "q-1", 1)
    _submit(store, "q-1", 1)
    with pytest.raises(ConflictError):
        _submit(store, "q-1", 2)
    assert _jobs(pg) == [(TASK_NAME, QUEUE, "q-1", "q-1", "todo")]


def test_a_job_deferred_in_a_rolled_back_transaction_is_gone(pg: Database) -> None:
    """defer_in runs on the transaction's own connection: a rollback takes the job with it."""
    with pytest.raises(RuntimeError), pg.begin_write() as conn:
        defer_in(conn, "q-2")
        raise RuntimeError("the game's insert failed after the defer")
    assert _jobs(pg) == []


def test_the_migration_defers_a_job_for_each_waiting_game(pg: Database) -> None:
    """Games queued or analysing in the old in-table queue get a job from 0006_queue; finished ones none."""
    downgrade(pg, "0005_compact")
    assert pg.query("SELECT count(*) FROM pg_class WHERE relname = 'procrastinate_jobs'") == [(0,)]
    now = "2026-12-01T00:00:00.000000Z"
    for match_id, status in [("w-1", "queued"), ("w-2", "analysing"), ("w-3", "applied"), ("w-4", "failed")]:
        with pg.begin_write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO games (match_id, body, body_hash, status, attempts, claim, lease_until,"
                " created_at, updated_at) VALUES (%(m)s, '{}', 'h', %(s)s, 1, 'c', 1.0, %(t)s, %(t)s)",
                {"m": match_id, "s": status, "t": now},
            )
    upgrade(pg)
    assert [(j[2], j[4]) for j in _jobs(pg)] == [("w-1", "todo"), ("w-2", "todo")]
    statuses = pg.query("SELECT match_id, status, claim FROM games ORDER BY match_id")
    assert statuses == [
        ("w-1", "queued", "c"),
        ("w-2", "queued", None),
        ("w-3", "applied", "c"),
        ("w-4", "failed", "c"),
    ]


def test_the_downgrade_drops_procrastinate_and_requeues_games_in_analysis(pg: Database) -> None:
    """Down to 0005_compact: no procrastinate table, type or function left; an analysing game waits again."""
    store = GameStore(pg)
    _submit(store, "d-1", 3)
    assert store.take("d-1", 60.0) is not None
    downgrade(pg, "0005_compact")
    left = pg.query(
        "SELECT count(*) FROM pg_class WHERE relname LIKE 'procrastinate%%'"
        " UNION ALL SELECT count(*) FROM pg_type WHERE typname LIKE 'procrastinate%%'"
        " UNION ALL SELECT count(*) FROM pg_proc WHERE proname LIKE 'procrastinate%%'"
    )
    assert left == [(0,), (0,), (0,)]
    assert store.get("d-1").status == "queued"
    upgrade(pg)
    assert [j[2] for j in _jobs(pg)] == ["d-1"]
