"""The writer's PostgreSQL session plans its prepared statements once, and gives the setting back."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from conftest import _reset_pg
from sedma_elo.core.model import Match
from sedma_elo.service import Ledger, submission_from_match
from sedma_elo.storage import open_database

pytestmark = pytest.mark.postgres


def _mode(raw: Any) -> str:
    assert isinstance(raw, psycopg.Connection)
    row = raw.execute("SHOW plan_cache_mode").fetchone()
    raw.rollback()
    assert row is not None
    return str(row[0])


@pytest.fixture
def ledger(pg_database: str) -> Any:
    _reset_pg(pg_database)
    db = open_database(pg_database, pool_size=1, max_overflow=0)
    ledger = Ledger(db)
    ledger.ensure_version()
    yield ledger
    db.dispose()


def test_a_writer_session_uses_generic_plans(ledger: Ledger) -> None:
    """While a writer session holds its connection, its statements are planned generically."""
    with ledger.writer_session() as session:
        session.apply([submission_from_match(Match.single("p1", "p2", "a", match_id="m-1"))])
        assert session._conn is not None
        assert _mode(session._conn.driver_connection) == "force_generic_plan"


def test_the_pooled_connection_gets_the_default_back(ledger: Ledger) -> None:
    """The connection a writer session returns to the pool plans as PostgreSQL chooses again."""
    with ledger.writer_session() as session:
        session.apply([submission_from_match(Match.single("p1", "p2", "a", match_id="m-1"))])
    conn = ledger.db.write.raw_connection()  # the pool's only connection: the session's
    try:
        assert _mode(conn.driver_connection) == "auto"
    finally:
        conn.close()
