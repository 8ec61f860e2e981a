"""Engines and migrations on SQLite (and the URL rules)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sedma_elo.errors import ValidationError
from sedma_elo.storage import (
    DEFAULT_DATABASE_URL,
    downgrade,
    libpq_url,
    normalize_url,
    open_database,
    upgrade,
)


def test_default_and_postgres_urls_are_normalised() -> None:
    """No URL means ./sedma-elo.db; postgresql:// gets the psycopg 3 driver."""
    assert normalize_url(None) == DEFAULT_DATABASE_URL == "sqlite:///./sedma-elo.db"
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"


def test_libpq_url_drops_the_driver_name_and_keeps_the_rest() -> None:
    """psycopg's form of a PostgreSQL URL: the same host, user, password, port, database and options."""
    url = "postgresql+psycopg://u:p%40ss@h:5433/db?sslmode=require"
    assert libpq_url(url) == "postgresql://u:p%40ss@h:5433/db?sslmode=require"
    assert libpq_url("postgresql://u@h/db") == "postgresql://u@h/db"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file::memory:?uri=true"])
def test_an_in_memory_sqlite_database_is_refused_naming_the_field(url: str) -> None:
    """open_database refuses an in-memory SQLite URL with the project's error, not the driver's."""
    with pytest.raises(ValidationError) as refused:
        open_database(url)
    assert refused.value.field == "database_url"
    assert "in-memory SQLite database" in str(refused.value)


def test_sqlite_runs_in_wal_with_busy_timeout_and_full_sync(tmp_path: Path) -> None:
    """Every SQLite connection is set up for crash-safe concurrent use."""
    db = open_database(f"sqlite:///{tmp_path}/a.db")
    try:
        with db.read.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    finally:
        db.dispose()


def test_migrations_create_the_schema_once(tmp_path: Path) -> None:
    """Opening twice leaves one schema at the head revision with the rank index."""
    url = f"sqlite:///{tmp_path}/b.db"
    open_database(url).dispose()
    db = open_database(url)
    try:
        inspector = sa.inspect(db.read)
        assert {"matches", "player_ratings", "rating_changes", "rating_versions", "api_keys"} <= set(
            inspector.get_table_names()
        )
        assert "ix_player_ratings_rank" in {i["name"] for i in inspector.get_indexes("player_ratings")}
        with db.read.connect() as conn:
            head = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
            assert head == "0014_meetings"
    finally:
        db.dispose()


def test_write_transactions_begin_immediate(tmp_path: Path) -> None:
    """A write transaction holds the write lock from its start, so a second writer waits rather than fails."""
    db = open_database(f"sqlite:///{tmp_path}/c.db")
    other = open_database(f"sqlite:///{tmp_path}/c.db", migrate=False)
    try:
        with db.write.begin():
            conn = other.write.connect()
            raw = conn.connection.dbapi_connection
            assert raw is not None
            raw.execute("PRAGMA busy_timeout=50")
            try:
                conn.begin()
            except sa.exc.OperationalError as exc:
                assert "locked" in str(exc)
            else:
                raise AssertionError("a second BEGIN IMMEDIATE should not get the lock")
            finally:
                conn.close()
    finally:
        other.dispose()
        db.dispose()


def _wait_for_blocked_flock(lock_file: Path, thread: threading.Thread, timeout: float = 20.0) -> None:
    """Return once the kernel lists a flock waiting on ``lock_file`` (``/proc/locks``, marked ``->``)."""
    locks = Path("/proc/locks")
    if not locks.exists():
        pytest.skip("/proc/locks is not available: cannot observe the waiting writer")
    inode = f":{lock_file.stat().st_ino} "
    deadline = time.monotonic() + timeout
    while not any(
        "->" in line and "FLOCK" in line and inode in line for line in locks.read_text().splitlines()
    ):
        assert thread.is_alive(), "the second writer finished without waiting for the lock"
        assert time.monotonic() < deadline, "the second writer never waited on the lock file"
        time.sleep(0.001)  # polling an observed kernel state, not a guess at how long it takes


def test_begin_write_queues_a_second_database_on_the_same_file(tmp_path: Path) -> None:
    """A writer of another Database (as of another process) waits on the lock file, not in the busy loop."""
    db = open_database(f"sqlite:///{tmp_path}/q.db")
    other = open_database(f"sqlite:///{tmp_path}/q.db", migrate=False)
    events: list[str] = []
    try:
        # A 50 ms busy timeout would fail the second writer if it reached SQLite while the first holds it.
        @sa.event.listens_for(other.write, "connect")
        def _short_timeout(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.execute("PRAGMA busy_timeout=50")

        def second() -> None:
            with other.begin_write() as conn:
                events.append("second in")
                conn.exec_driver_sql("CREATE TABLE second_writer (x INTEGER)")

        with db.begin_write() as conn:
            conn.exec_driver_sql("CREATE TABLE first_writer (x INTEGER)")
            thread = threading.Thread(target=second)
            thread.start()
            # Release only once the second writer is seen blocked in flock() on the lock file.
            _wait_for_blocked_flock(tmp_path / "q.db-writer.lock", thread)
            events.append("first out")
        thread.join(10)
        assert events == ["first out", "second in"]
        with other.read.connect() as conn:
            names = {
                r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        assert {"first_writer", "second_writer"} <= names
    finally:
        other.dispose()
        db.dispose()


def test_the_write_lock_lives_in_its_own_file_next_to_the_database(tmp_path: Path) -> None:
    """The lock is a separate file: SQLite's own locks on the database file are never touched."""
    db = open_database(f"sqlite:///{tmp_path}/w.db")
    try:
        with db.begin_write():
            pass
        assert (tmp_path / "w.db-writer.lock").exists()
    finally:
        db.dispose()


def test_migrations_downgrade_to_base_and_upgrade_again(tmp_path: Path) -> None:
    """Downgrading to base drops every table; upgrading again recreates the head schema."""
    db = open_database(f"sqlite:///{tmp_path}/d.db")
    try:
        downgrade(db, "base")
        assert set(sa.inspect(db.read).get_table_names()) <= {"alembic_version"}
        upgrade(db)
        assert {"matches", "player_ratings", "rating_changes", "rating_versions", "api_keys"} <= set(
            sa.inspect(db.read).get_table_names()
        )
    finally:
        db.dispose()


@pytest.mark.postgres
def test_postgres_migrations_downgrade_to_base_and_upgrade_again(new_pg_database: Any) -> None:
    """On a fresh PostgreSQL database: down to base leaves no table or sequence; up recreates them."""
    db = open_database(new_pg_database())
    try:
        downgrade(db, "base")
        assert set(sa.inspect(db.read).get_table_names()) <= {"alembic_version"}
        assert db.query("SELECT count(*) FROM pg_class WHERE relname = 'ledger_sequence'") == [(0,)]
        upgrade(db)
        assert "matches" in sa.inspect(db.read).get_table_names()
        assert db.query("SELECT count(*) FROM pg_class WHERE relname = 'ledger_sequence'") == [(1,)]
    finally:
        db.dispose()


@pytest.mark.postgres
def test_postgres_id_columns_compare_by_code_point_as_declared(new_pg_database: Any) -> None:
    """The migrated id columns are exactly those schema.py declares with ID_TYPE, each COLLATE "C"."""
    from sedma_elo.storage.schema import ID_TYPE, metadata

    declared = {(t.name, c.name) for t in metadata.sorted_tables for c in t.columns if c.type is ID_TYPE}
    db = open_database(new_pg_database())
    try:
        rows = db.query(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND collation_name = 'C'"
        )
        assert {(t, c) for t, c in rows} == declared
        assert ("players", "player_id") in declared and ("matches", "match_id") in declared
    finally:
        db.dispose()
