"""Pool sizes that add up (issue 12 row 9): N processes never hold more than db_max_connections in all."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from conftest import single
from needs import reset_pg
from sedma_elo.errors import ValidationError
from sedma_elo.service import ServiceSettings, create_app
from sedma_elo.service.auth import create_key
from sedma_elo.service.settings import GAME_WORKER_POOLS
from sedma_elo.storage import libpq_url, open_database


@pytest.mark.parametrize("total", [6, 10, 16, 32, 97, 100, 1000])
@pytest.mark.parametrize("processes", [1, 2, 3, 8])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("game_workers", [0, 1, 3])
@pytest.mark.parametrize("writer_process", [False, True])
def test_the_split_never_exceeds_the_budget(
    total: int, processes: int, threads: int, game_workers: int, writer_process: bool
) -> None:
    """API processes (with their writer processes) and serve's game workers sum to at most total;
    each pool has one; writers fit."""
    settings = ServiceSettings(
        db_max_connections=total,
        processes=processes,
        writer_threads=threads,
        game_workers=game_workers,
        writer_process=writer_process,
    )
    workers_share = game_workers * GAME_WORKER_POOLS.total
    if (total - workers_share) // processes < threads + 4:
        with pytest.raises(ValidationError, match="db_max_connections"):
            settings.pool_sizes()
        return
    sizes = settings.pool_sizes()
    assert sizes.total * processes + workers_share <= total
    assert sizes.overflow == 0
    assert min(sizes.fast, sizes.async_reader) >= 1
    assert sizes.writer == (2 if writer_process else 0)
    # the writers hold theirs; key checks and admin still get one
    assert sizes.engine + sizes.writer >= threads + 2
    assert sizes.engine >= 1
    assert sizes.total >= (total - workers_share) // processes - 1  # the budget is used, not wasted


def test_without_a_budget_each_pool_has_pool_size() -> None:
    """The default (no db_max_connections) keeps pool_size per pool, overflow as much again."""
    sizes = ServiceSettings(pool_size=7).pool_sizes()
    assert (sizes.engine, sizes.fast, sizes.async_reader, sizes.overflow) == (7, 7, 7, 7)


def test_the_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """SEDMA_ELO_DB_MAX_CONNECTIONS and SEDMA_ELO_PROCESSES (which serve --workers sets) configure it."""
    monkeypatch.setenv("SEDMA_ELO_DB_MAX_CONNECTIONS", "40")
    monkeypatch.setenv("SEDMA_ELO_PROCESSES", "4")
    monkeypatch.setenv("SEDMA_ELO_GAME_WORKERS", "0")
    assert ServiceSettings().pool_sizes().total <= 10


def _connections(admin: psycopg.Connection[Any], database: str) -> int:
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (database,)
    ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.faults
def test_two_processes_under_a_read_burst_stay_within_the_budget(pg_database: str) -> None:
    """Two per-process apps (processes=2, budget 16) under 64 concurrent readers: at most 16 connections."""
    reset_pg(pg_database)
    budget = 16
    db = open_database(pg_database)
    key, _ = create_key(db, "write", "pools")
    db.dispose()
    name = pg_database.rsplit("/", 1)[1]
    paths = [
        "/v1/players/ann",
        "/v1/players/ann/history",
        "/v1/leaderboard",
        "/v1/players?prefix=a",
        "/v1/recent-changes?players=ann&players=bob",
        "/v1/leaderboard/around/ann",
        "/",
    ]
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        with psycopg.connect(libpq_url(pg_database), autocommit=True) as admin:
            while not stop.is_set():
                peak = max(peak, _connections(admin, name))
                time.sleep(0.005)

    with ExitStack() as stack:
        clients: list[TestClient] = []
        for _ in range(2):
            settings = ServiceSettings(
                database_url=pg_database, db_max_connections=budget, processes=2, game_workers=0
            )
            clients.append(stack.enter_context(TestClient(create_app(settings))))
        headers = {"Authorization": f"Bearer {key}"}
        assert (
            clients[0].post("/v1/matches", json=single("p-1", "ann", "bob"), headers=headers).status_code
            == 201
        )
        # Each route's first request builds FastAPI's lazily made route context; two apps in one
        # process doing that on two threads at once race in pydantic (a test artefact: a serving
        # process has one app and one event loop), so every route is read once first.
        for client in clients:
            for path in paths:
                assert client.get(path).status_code == 200, path
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:

            def read(i: int) -> int:
                return clients[i % 2].get(paths[i % len(paths)]).status_code

            with ThreadPoolExecutor(64) as pool:
                statuses = list(pool.map(read, range(1500)))
        finally:
            stop.set()
            sampler.join()
    assert set(statuses) == {200}, sorted(set(statuses))
    assert 4 <= peak <= budget, peak
