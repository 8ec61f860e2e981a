"""Fixtures for the service tests: a fresh SQLite file or a fresh PostgreSQL schema per test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from needs import reset_pg
from sedma_elo.service import Ledger, ServiceSettings, create_app
from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database


class Api:
    """A test client with a write key and an admin key."""

    def __init__(self, client: TestClient, write_key: str, admin_key: str, url: str) -> None:
        self.client = client
        self.write_key = write_key
        self.admin_key = admin_key
        self.url = url

    def headers(self, key: str | None) -> dict[str, str]:
        return {} if key is None else {"Authorization": f"Bearer {key}"}

    def post(self, body: Any, key: str | None = "write") -> Any:
        real = {"write": self.write_key, "admin": self.admin_key}.get(key or "", key)
        return self.client.post("/v1/matches", json=body, headers=self.headers(real))

    def admin(self, path: str, body: Any) -> Any:
        return self.client.post(path, json=body, headers=self.headers(self.admin_key))

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(path, params=params)


def make_api(url: str, **settings: Any) -> Iterator[Api]:
    db = open_database(url)
    write_key, _ = create_key(db, "write", "tests")
    admin_key, _ = create_key(db, "admin", "tests")
    db.dispose()
    app = create_app(ServiceSettings(database_url=url, **settings))
    with TestClient(app) as client:
        yield Api(client, write_key, admin_key, url)


@pytest.fixture
def api(db_url: str) -> Iterator[Api]:
    """The app on an empty database of each kind, with keys."""
    yield from make_api(db_url)


def single(
    match_id: str, a: str = "alice", b: str = "bob", winner: str = "a", **stats: Any
) -> dict[str, Any]:
    """A one-against-one match body."""
    return {
        "match_id": match_id,
        "played_at": "2026-11-29T12:00:00Z",
        "player_a": a,
        "player_b": b,
        "winner": winner,
        "stats": stats or {"a": {}, "b": {}},
    }


@pytest.fixture
def pg_ledger(pg_database: str) -> Iterator[Ledger]:
    """A ledger on the session's PostgreSQL database, emptied, with its first version; one connection."""
    reset_pg(pg_database)
    db = open_database(pg_database, pool_size=1, max_overflow=0)
    ledger = Ledger(db)
    ledger.ensure_version()
    yield ledger
    db.dispose()
