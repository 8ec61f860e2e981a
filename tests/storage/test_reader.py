"""AsyncReader: the awaitable read path the HTTP routes use, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import psycopg
import pytest

from sedma_elo.storage import AsyncReader, Database, libpq_url, open_database


def _seeded(url: str) -> Database:
    """The migrated database at ``url`` with three players' ratings."""
    database = open_database(url)
    with database.begin_write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO rating_versions (id, label, rules_label, rules_toml, active, created_at)"
            " VALUES (1, 'v', 'r', '', true, 'now')"
        )
        for pid, rating in (("ann", 1010), ("ben", 990), ("cat", 1030)):
            conn.exec_driver_sql(
                "INSERT INTO player_ratings (version_id, player_id, rating, matches_played,"
                f" last_sequence) VALUES (1, '{pid}', {rating}, 1, 1)"
            )
    return database


@pytest.fixture
def db(any_url: str) -> Iterator[Database]:
    """The seeded database: a SQLite file or a fresh PostgreSQL database."""
    database = _seeded(any_url)
    yield database
    database.dispose()


@pytest.fixture
def pg_db(new_pg_database: Callable[[], str]) -> Iterator[Database]:
    """The seeded database on PostgreSQL."""
    database = _seeded(new_pg_database())
    yield database
    database.dispose()


SQL = "SELECT player_id, rating FROM player_ratings WHERE version_id = ? AND rating > ? ORDER BY rating DESC"


def test_async_query_returns_what_the_blocking_query_returns(db: Database) -> None:
    """Same statement, same parameters, same rows as Database.query."""

    async def run() -> list[list[tuple[object, ...]]]:
        reader = AsyncReader(db, size=2)
        try:
            return list(await asyncio.gather(*(reader.query(SQL, (1, 1000)) for _ in range(5))))
        finally:
            await reader.close()

    expected = db.query(SQL, (1, 1000))
    assert expected == [("cat", 1030), ("ann", 1010)]
    assert all(rows == expected for rows in asyncio.run(run()))


@pytest.mark.postgres
def test_a_pooled_connection_killed_by_the_server_is_replaced(pg_db: Database) -> None:
    """After the server drops the reader's idle connection, the next query still answers."""
    db = pg_db

    async def run() -> list[tuple[object, ...]]:
        reader = AsyncReader(db)
        try:
            await reader.query(SQL, (1, 0))
            with psycopg.connect(libpq_url(db.url), autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            return await reader.query(SQL, (1, 1000))
        finally:
            await reader.close()

    assert asyncio.run(run()) == [("cat", 1030), ("ann", 1010)]


@pytest.mark.postgres
def test_pg_connections_plan_each_statement_once(pg_db: Database) -> None:
    """The reader's PostgreSQL connections keep one generic plan per statement."""

    async def run() -> list[tuple[object, ...]]:
        reader = AsyncReader(pg_db, size=1)
        try:
            return await reader.query("SHOW plan_cache_mode")
        finally:
            await reader.close()

    assert asyncio.run(run()) == [("force_generic_plan",)]
