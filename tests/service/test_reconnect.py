"""PostgreSQL connections that die under the writer: the batch is retried on a new connection."""

from __future__ import annotations

import psycopg
import pytest

from sedma_elo.core.model import Match
from sedma_elo.service import Ledger
from sedma_elo.service.payload import submission_from_match
from sedma_elo.storage import open_database

pytestmark = pytest.mark.postgres


def _kill_other_backends(url: str) -> int:
    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def db_url(pg_database: str) -> str:
    """The session's PostgreSQL database, emptied."""
    with psycopg.connect(pg_database.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
    return pg_database


def test_a_batch_on_a_killed_connection_is_applied_on_a_new_one(db_url: str) -> None:
    """After the server drops every pooled connection, the next batch still lands, once."""
    ledger = Ledger(open_database(db_url))
    ledger.ensure_version()
    first = ledger.apply([submission_from_match(Match.single("ann", "bob", "a", match_id="r-1"))])
    assert first[0].status == "created"
    assert _kill_other_backends(db_url) >= 1
    again = ledger.apply([submission_from_match(Match.single("ann", "bob", "b", match_id="r-2"))])
    assert again[0].status == "created"
    assert [m.match_id for _, m in ledger.ledger()] == ["r-1", "r-2"]
    assert ledger.verify().ok
    ledger.db.dispose()
