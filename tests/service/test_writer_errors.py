"""The writers' database driver errors and batches reach ``/metrics`` (the writer sessions talk to
the driver past SQLAlchemy's error events; a writer process has no ``/metrics`` of its own)."""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from prometheus_client import REGISTRY

from sedma_elo.core.model import Match
from sedma_elo.service import GroupWriter, Ledger
from sedma_elo.service.payload import Submission, submission_from_match
from sedma_elo.service.writer_main import Reply, _Loop
from sedma_elo.service.writer_process import ProcessWriter, WriterConfig
from sedma_elo.storage import libpq_url, open_database


def _sub(match_id: str, a: str = "ann", b: str = "bob") -> Submission:
    return submission_from_match(Match.single(a, b, "a", match_id=match_id))


def _errors() -> float:
    """``sedma_elo_database_errors_total`` of this process."""
    value = REGISTRY.get_sample_value("sedma_elo_database_errors_total")
    assert value is not None
    return value


def _kill_other_backends(url: str) -> None:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def pg_url(new_pg_database: Callable[[], str]) -> str:
    """A new PostgreSQL ledger with its version; no connection of this process left open on it."""
    url = new_pg_database()
    db = open_database(url)
    Ledger(db).ensure_version()
    db.dispose()
    return url


@pytest.mark.postgres
@pytest.mark.faults
def test_a_writer_session_counts_the_error_of_a_killed_connection(pg_url: str) -> None:
    """A batch that met a dead connection and landed on a new one counts one driver error, once."""
    ledger = Ledger(open_database(pg_url))
    with ledger.writer_session() as session:
        assert session.apply([_sub("e-1")])[0].status == "created"
        assert session.take_errors() == 0
        _kill_other_backends(pg_url)
        assert session.apply([_sub("e-2")])[0].status == "created"
        assert session.take_errors() == 1
        assert session.take_errors() == 0
    ledger.db.dispose()


def _writer(kind: str, url: str, ledger: Ledger) -> GroupWriter | ProcessWriter:
    return GroupWriter(ledger) if kind == "thread" else ProcessWriter(WriterConfig(url), ledger)


@pytest.mark.postgres
@pytest.mark.faults
@pytest.mark.parametrize("kind", ["thread", "process"])
def test_a_writer_adds_its_driver_errors_to_the_api_metrics(pg_url: str, kind: str) -> None:
    """A writer thread's or writer process's driver error is in the API process's
    sedma_elo_database_errors_total."""
    ledger = Ledger(open_database(pg_url))
    writer = _writer(kind, pg_url, ledger)
    writer.start()
    try:
        assert writer.submit_nowait(_sub("t-1")).result(timeout=30).status == "created"
        _kill_other_backends(pg_url)
        before = _errors()
        assert writer.submit_nowait(_sub("t-2")).result(timeout=30).status == "created"
        assert _errors() == before + 1
    finally:
        writer.stop()
        ledger.db.dispose()


@pytest.fixture
def sqlite_ledger(tmp_path: Any) -> Iterator[Ledger]:
    """A new SQLite ledger with its version."""
    ledger = Ledger(open_database(f"sqlite:///{tmp_path}/ledger.db"))
    ledger.ensure_version()
    yield ledger
    ledger.db.dispose()


def test_one_client_counts_a_batch_that_two_clients_share(sqlite_ledger: Ledger) -> None:
    """A shared writer's batch goes to /metrics once: its size and new matches in one client's reply."""
    (one, one_end), (two, two_end) = multiprocessing.Pipe(), multiprocessing.Pipe()
    loop = _Loop(one, max_batch=16, shared=True)
    try:
        loop.backlog.extend([(one, 1, _sub("s-1", "a", "b")), (two, 2, _sub("s-2", "c", "d"))])
        loop.backlog.extend([(one, 3, _sub("s-1", "a", "b")), (two, 4, _sub("s-3", "e", "f"))])
        with sqlite_ledger.writer_session() as session:
            loop._apply_next(session)
        first: Reply = pickle.loads(one_end.recv_bytes())
        second: Reply = pickle.loads(two_end.recv_bytes())
    finally:
        for conn in (one, one_end, two, two_end):
            conn.close()
        loop.close()
    assert [token for token, _ in first.results] == [1, 3]
    assert [token for token, _ in second.results] == [2, 4]
    assert first.batch == (4, 3)  # four submissions, one of them a repeat
    assert second.batch is None
