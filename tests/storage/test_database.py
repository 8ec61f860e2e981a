"""Engines and migrations on SQLite (and the URL rules)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from sedma_elo.storage import DEFAULT_DATABASE_URL, normalize_url, open_database


def test_default_and_postgres_urls_are_normalised() -> None:
    """No URL means ./sedma-elo.db; postgresql:// gets the psycopg 3 driver."""
    assert normalize_url(None) == DEFAULT_DATABASE_URL == "sqlite:///./sedma-elo.db"
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"


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
            assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == "0001"
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
