"""The writer's PostgreSQL session: generic plans, the batch's own BEGIN and COMMIT (what commits,
what rolls back), and the connection it gives back to the pool."""

from __future__ import annotations

import concurrent.futures
import json
from typing import Any

import psycopg
import pytest

from sedma_elo.core.model import Match
from sedma_elo.service import Ledger, submission_from_match
from sedma_elo.service.ledger import write_pg
from sedma_elo.service.ledger.batch import Batch
from sedma_elo.service.payload import Submission
from sedma_elo.storage import libpq_url

pytestmark = pytest.mark.postgres


def _mode(raw: Any) -> str:
    assert isinstance(raw, psycopg.Connection)
    row = raw.execute("SHOW plan_cache_mode").fetchone()
    raw.rollback()
    assert row is not None
    return str(row[0])


def _sub(match_id: str, a: str = "p1", b: str = "p2") -> Submission:
    return submission_from_match(Match.single(a, b, "a", match_id=match_id))


def _stored(url: str) -> tuple[int, int, int]:
    """Ledger rows, rating changes and rated players, read on a connection of its own."""
    with psycopg.connect(libpq_url(url)) as conn:
        counts = [
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()
            for t in ("matches", "rating_changes", "player_ratings")
        ]
    return tuple(int(c[0]) for c in counts if c is not None)  # type: ignore[return-value]


def _status(ledger_session: Any) -> psycopg.pq.TransactionStatus:
    raw = ledger_session._conn.driver_connection
    assert isinstance(raw, psycopg.Connection)
    return raw.info.transaction_status


@pytest.fixture
def ledger(pg_ledger: Ledger) -> Ledger:
    return pg_ledger


def test_a_writer_session_uses_generic_plans(ledger: Ledger) -> None:
    """While a writer session holds its connection, its statements are planned generically."""
    with ledger.writer_session() as session:
        session.apply([_sub("m-1")])
        assert session._conn is not None
        assert _mode(session._conn.driver_connection) == "force_generic_plan"


def test_the_pooled_connection_gets_the_default_back(ledger: Ledger) -> None:
    """The connection a writer session returns to the pool plans as PostgreSQL chooses again."""
    with ledger.writer_session() as session:
        session.apply([_sub("m-1")])
    conn = ledger.db.write.raw_connection()  # the pool's only connection: the session's
    try:
        assert _mode(conn.driver_connection) == "auto"
    finally:
        conn.close()


def test_a_batch_is_committed_before_apply_returns(ledger: Ledger, pg_database: str) -> None:
    """Another connection sees a batch's rows while the session still holds its connection."""
    with ledger.writer_session() as session:
        outcomes = session.apply([_sub("m-1"), _sub("m-2", "p3", "p4")])
        assert [o.status for o in outcomes] == ["created", "created"]
        assert _stored(pg_database) == (2, 4, 4)
        assert _status(session) == psycopg.pq.TransactionStatus.IDLE


def test_a_batch_that_raises_before_its_commit_stores_nothing(
    ledger: Ledger, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch failing in Python after its writes were sent is rolled back; the next one commits."""

    def fail(self: Batch, *args: object) -> None:
        raise RuntimeError("answers failed")

    with ledger.writer_session() as session:
        with monkeypatch.context() as patch:
            patch.setattr(Batch, "answer", fail)
            with pytest.raises(RuntimeError, match="answers failed"):
                session.apply([_sub("m-1")])
        assert _status(session) == psycopg.pq.TransactionStatus.IDLE
        assert _stored(pg_database) == (0, 0, 0)
        assert [o.status for o in session.apply([_sub("m-1")])] == ["created"]
    assert _stored(pg_database) == (1, 2, 2)


def test_a_statement_that_fails_rolls_the_batch_back(
    ledger: Ledger, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement the server refuses after the batch's writes undoes them all."""

    def divide(raw: psycopg.Connection[Any], *args: object) -> None:
        raw.execute("SELECT 1 / 0")

    with ledger.writer_session() as session:
        with monkeypatch.context() as patch:
            patch.setattr(write_pg, "move_counts", divide)
            with pytest.raises(psycopg.errors.DivisionByZero):
                session.apply([_sub("m-1")])
        assert _status(session) == psycopg.pq.TransactionStatus.IDLE
        assert _stored(pg_database) == (0, 0, 0)
        assert [o.status for o in session.apply([_sub("m-1")])] == ["created"]


def test_a_retryable_failure_is_retried_on_the_same_connection(
    ledger: Ledger, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A serialization failure in a batch's transaction is rolled back and the batch stored once."""
    real = write_pg.move_counts
    failures = [1]

    def once(raw: psycopg.Connection[Any], *args: Any) -> None:
        if failures:
            failures.pop()
            raw.execute("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$")
        real(raw, *args)

    monkeypatch.setattr(write_pg, "move_counts", once)
    with ledger.writer_session() as session:
        assert [o.status for o in session.apply([_sub("m-1")])] == ["created"]
        assert session.take_errors() == 1
    assert failures == []
    assert _stored(pg_database) == (1, 2, 2)


def test_apply_pg_refuses_a_connection_outside_autocommit(ledger: Ledger) -> None:
    """Without autocommit psycopg would wrap the batch's own BEGIN in a transaction of its own."""
    conn = ledger.db.write.raw_connection()
    try:
        raw = conn.driver_connection
        assert isinstance(raw, psycopg.Connection) and not raw.autocommit
        with pytest.raises(ValueError, match="autocommit"):
            write_pg.apply_pg(ledger, raw, [_sub("m-1")])
    finally:
        conn.close()


def test_the_pooled_connection_leaves_autocommit(ledger: Ledger) -> None:
    """The connection a writer session returns to the pool is out of autocommit mode again."""
    with ledger.writer_session() as session:
        session.apply([_sub("m-1")])
        assert session._conn is not None
        assert session._conn.driver_connection.autocommit
    conn = ledger.db.write.raw_connection()  # the pool's only connection: the session's
    try:
        assert not conn.driver_connection.autocommit
    finally:
        conn.close()


def test_statements_prepared_in_a_failed_batch_are_prepared_again(
    ledger: Ledger, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement due to be prepared in a batch the server aborted is prepared again afterwards.

    psycopg prepares a statement on its sixth run and counts it prepared once sent; in a pipeline
    aborted by an earlier error the server skips that preparation. The failed batch's rollback
    must clear psycopg's list, or the next batch names a statement the server never had.
    """
    real = write_pg.write_rows_pg

    def abort_first(raw: psycopg.Connection[Any], *args: Any) -> None:
        raw.execute("SELECT 1 / 0")  # the statements after it in the pipeline are skipped
        real(raw, *args)

    def failing(session: Any, match_id: str) -> None:
        with monkeypatch.context() as patch:
            patch.setattr(write_pg, "write_rows_pg", abort_first)
            with pytest.raises(psycopg.errors.DivisionByZero):
                session.apply([_sub(match_id, "x1", "x2")])

    with ledger.writer_session() as session:
        failing(session, "f-1")  # not the session's first rollback: only that one cleared the list
        for i in range(5):  # every statement of a batch run five times
            assert [o.status for o in session.apply([_sub(f"m-{i}", f"a{i}", f"b{i}")])] == ["created"]
        failing(session, "f-2")  # the sixth run: due to be prepared, skipped by the server
        assert [o.status for o in session.apply([_sub("m-6", "a6", "b6")])] == ["created"]
    assert _stored(pg_database) == (6, 12, 12)


def test_a_batch_rates_on_what_another_writer_committed_while_it_waited(
    ledger: Ledger, pg_database: str
) -> None:
    """A batch waits for another writer's open change to its player and rates on the committed value.

    The other transaction holds what a writer's batch holds at its end (the feed's lock, a changed
    player row); a batch that read the player before that commit would store a lost update.
    """
    with ledger.writer_session() as session:
        session.apply([_sub("m-1")])
    with psycopg.connect(libpq_url(pg_database)) as other:
        other.execute("LOCK TABLE change_events IN EXCLUSIVE MODE")
        other.execute("UPDATE player_ratings SET rating = 1500 WHERE player_id = 'p1'")
        with concurrent.futures.ThreadPoolExecutor(1) as pool, ledger.writer_session() as session:
            pending = pool.submit(session.apply, [_sub("m-2", "p1", "p3")])
            with pytest.raises(concurrent.futures.TimeoutError):
                pending.result(timeout=0.5)  # waiting for the lock
            other.commit()
            (outcome,) = pending.result(timeout=30)
    changes = {c["player_id"]: c for c in json.loads(outcome.body)["changes"]}
    assert changes["p1"]["rating_before"] == 1500
