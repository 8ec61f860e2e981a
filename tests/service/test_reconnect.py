"""PostgreSQL connections that die: writes retry on a new connection, reads recover, /readyz tells."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from conftest import make_api, single
from sedma_elo.core.model import Match
from sedma_elo.service import Ledger
from sedma_elo.service.payload import submission_from_match
from sedma_elo.storage import libpq_url, open_database

pytestmark = [pytest.mark.postgres, pytest.mark.faults]


def _kill_other_backends(url: str) -> int:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def db_url(pg_database: str) -> str:
    """The session's PostgreSQL database, emptied."""
    with psycopg.connect(libpq_url(pg_database), autocommit=True) as conn:
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


def _read_routes() -> list[str]:
    return [
        "/v1/players/ann",
        "/v1/players/ann/history",
        "/v1/players?prefix=a",
        "/v1/leaderboard",
        "/v1/leaderboard/around/ann",
        "/v1/recent-changes?players=ann&players=bob",
        "/v1/matches/r-1",
        "/v1/versions",
        "/healthz",
        "/readyz",
        "/",
        "/players/ann",
    ]


def test_every_read_route_recovers_after_the_backends_are_terminated(db_url: str) -> None:
    """pg_terminate_backend on every connection of the app: each read route answers 200 again at once."""
    for api in make_api(db_url):
        assert api.post(single("r-1", a="ann", b="bob")).status_code == 201
        before = {path: api.client.get(path).status_code for path in _read_routes()}
        assert set(before.values()) == {200}, before
        for _ in range(2):  # twice: the second time every pool holds connections opened after the first
            assert _kill_other_backends(db_url) >= 1
            after = {path: api.client.get(path).status_code for path in _read_routes()}
            assert after == before
        assert api.post(single("r-2", a="ann", b="bob")).status_code == 201
        ledger: Any = api.client.app.state.ledger  # type: ignore[attr-defined]
        assert [m.match_id for _, m in ledger.ledger()] == ["r-1", "r-2"]  # each once
        assert ledger.verify().ok


def test_readyz_answers_503_while_the_database_is_unreachable(db_url: str) -> None:
    """/readyz: 200 while PostgreSQL answers, 503 with a JSON body while connections are refused."""
    for api in make_api(db_url):
        assert api.get("/readyz").json()["status"] == "ready"
        services: Any = api.client.app.state.services  # type: ignore[attr-defined]
        real = services.db.url
        # Point the engines at a port where nothing listens, as if the server were gone.
        dead = open_database(real.replace("127.0.0.1:5432", "127.0.0.1:9"), migrate=False)
        live = (services.db.read, services.db.write, services.db.fast)
        services.db.read, services.db.write, services.db.fast = dead.read, dead.write, dead.fast
        try:
            _kill_other_backends(db_url)
            r = api.get("/readyz")
            assert r.status_code == 503
            assert r.headers["content-type"] == "application/json"
            assert r.json()["status"] == "not ready"
        finally:
            services.db.read, services.db.write, services.db.fast = live
            dead.dispose()
        assert api.get("/readyz").status_code == 200
