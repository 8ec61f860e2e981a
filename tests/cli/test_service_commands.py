"""cli/service_commands.py: keys, and serve --demo's setup."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sedma_elo.cli import app
from sedma_elo.service import Ledger
from sedma_elo.service.auth import authenticate
from sedma_elo.storage import open_database

runner = CliRunner()


def test_keys_create_prints_the_key_last_and_stores_only_a_hash(db_url: str) -> None:
    """The last output line is a working key; the database never holds it in clear."""
    result = runner.invoke(app, ["keys", "create", "--scope", "admin", "--database-url", db_url])
    assert result.exit_code == 0, result.output
    key = result.output.strip().splitlines()[-1]
    assert key.startswith("sk_") and len(key) >= 40
    db = open_database(db_url)
    try:
        assert authenticate(db, key).scope == "admin"
        with db.read.connect() as conn:
            dump = "\n".join(str(tuple(r)) for r in conn.exec_driver_sql("SELECT * FROM api_keys"))
        assert key not in dump
    finally:
        db.dispose()
    listed = runner.invoke(app, ["keys", "list", "--database-url", db_url])
    assert "admin" in listed.output
    assert runner.invoke(app, ["keys", "revoke", "1", "--database-url", db_url]).exit_code == 0
    assert runner.invoke(app, ["keys", "revoke", "99", "--database-url", db_url]).exit_code == 2


def test_demo_setup_imports_the_sample_and_prints_a_key_last(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """serve --demo's setup imports the bundled history once and prints a working write key last."""
    from sedma_elo.cli.service_commands import _prepare_demo

    _prepare_demo(db_url, "127.0.0.1", 8000)
    out = capsys.readouterr().out
    key = out.strip().splitlines()[-1]
    assert "curl" in out and "http://127.0.0.1:8000" in out
    _prepare_demo(db_url, "127.0.0.1", 8000)  # a second start imports nothing more
    db = open_database(db_url)
    try:
        assert authenticate(db, key).scope == "write"
        ledger = Ledger(db)
        assert ledger.ledger_size() > 0
        assert ledger.verify().ok
    finally:
        db.dispose()
