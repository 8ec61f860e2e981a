"""`sedma-elo backup`: refusals with a clear message and exit 2; a copy of a quiet ledger."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from sedma_elo.cli import app

runner = CliRunner()


def _ledger(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/ledger.db"
    result = runner.invoke(app, ["db", "upgrade", "--database-url", url])
    assert result.exit_code == 0, result.output
    return url


def test_backup_refuses_postgresql_pointing_to_pg_dump(tmp_path: Path) -> None:
    """A PostgreSQL URL is refused (exit 2) with the pg_dump/pg_restore procedure named; nothing written."""
    out = tmp_path / "copy.db"
    result = runner.invoke(app, ["backup", str(out), "--database-url", "postgresql://postgres@127.0.0.1/x"])
    assert result.exit_code == 2
    assert "database_url" in result.output and "pg_dump" in result.output and "pg_restore" in result.output
    assert not out.exists()


def test_backup_refuses_an_existing_file_without_force(tmp_path: Path) -> None:
    """OUT that exists is refused naming ``out`` and left as it was."""
    url = _ledger(tmp_path)
    out = tmp_path / "copy.db"
    out.write_bytes(b"keep me")
    result = runner.invoke(app, ["backup", str(out), "--database-url", url])
    assert result.exit_code == 2
    assert "out" in result.output and "--force" in result.output
    assert out.read_bytes() == b"keep me"


def test_backup_refuses_a_missing_ledger(tmp_path: Path) -> None:
    """A SQLite file that does not exist is an error (exit 2), not an empty backup."""
    out = tmp_path / "copy.db"
    result = runner.invoke(app, ["backup", str(out), "--database-url", f"sqlite:///{tmp_path}/none.db"])
    assert result.exit_code == 2
    assert "no SQLite database" in result.output
    assert not out.exists()


def test_backup_copies_the_schema_and_replaces_with_force(tmp_path: Path) -> None:
    """The copy is a standalone SQLite database with the ledger's tables; --force replaces OUT."""
    url = _ledger(tmp_path)
    out = tmp_path / "copy.db"
    out.write_bytes(b"old")
    result = runner.invoke(app, ["backup", str(out), "--database-url", url, "--force"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(out) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        mode = conn.execute("PRAGMA journal_mode").fetchone()
    conn.close()
    assert {"matches", "rating_changes", "player_ratings"} <= tables
    assert mode == ("delete",)
    assert not list(tmp_path.glob(".copy.db.partial-*"))
