"""Database.read_many: several reads on one pooled connection, plans kept, dead connections replaced."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest
from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from sedma_elo.storage import Database, libpq_url, open_database


@pytest.fixture
def db(any_url: str) -> Iterator[Database]:
    """A migrated, empty database of each kind."""
    database = open_database(any_url)
    yield database
    database.dispose()


@pytest.fixture
def pg_db(new_pg_database: Callable[[], str]) -> Iterator[Database]:
    """A migrated, empty PostgreSQL database."""
    database = open_database(new_pg_database())
    yield database
    database.dispose()


def _key_read(conn: Connection) -> int:
    """One keyed statement with a parameter, as the player page runs them."""
    return len(conn.exec_driver_sql(_bound("SELECT id FROM rating_versions WHERE id = ?", conn), (1,)).all())


def _bound(sql: str, conn: Connection) -> str:
    return sql if conn.dialect.name == "sqlite" else sql.replace("?", "%s")


def test_read_many_returns_what_its_reads_return(db: Database) -> None:
    """Several statements on the one connection it lends; their result comes back."""

    def two(conn: Connection) -> tuple[int, int]:
        first = conn.exec_driver_sql("SELECT 1").scalar_one()
        second = conn.exec_driver_sql("SELECT 2").scalar_one()
        return int(first), int(second)

    assert db.read_many(two) == (1, 2)


def test_an_error_of_the_read_itself_is_raised_once(db: Database) -> None:
    """A failing statement on a live connection is not run again."""
    calls = []

    def bad(conn: Connection) -> None:
        calls.append(1)
        conn.exec_driver_sql("SELECT * FROM no_such_table")

    with pytest.raises(DBAPIError):
        db.read_many(bad)
    assert len(calls) == 1


@pytest.mark.postgres
def test_postgresql_keeps_prepared_statements_between_calls(pg_db: Database) -> None:
    """The driver's prepared statements survive the connection's return to the pool (no rollback
    deallocating them), so the server plans a statement run again and again only a few times."""
    for _ in range(8):  # psycopg prepares a statement at its sixth run on a connection
        pg_db.read_many(_key_read)
    kept = pg_db.read_many(
        lambda conn: conn.exec_driver_sql("SELECT count(*) FROM pg_prepared_statements").scalar()
    )
    assert kept is not None and kept >= 1


@pytest.mark.postgres
def test_a_connection_the_server_killed_is_replaced_and_the_read_run_again(pg_db: Database) -> None:
    """pg_terminate_backend on the pooled connections: the next call still answers, on a new one."""
    assert pg_db.read_many(_key_read) == 0
    with psycopg.connect(libpq_url(pg_db.url), autocommit=True) as admin:
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert killed is not None and killed[0] >= 1
    calls = []

    def counted(conn: Connection) -> int:
        calls.append(1)
        return _key_read(conn)

    assert pg_db.read_many(counted) == 0
    assert len(calls) == 2  # the first on the dead connection, the second on a new one
