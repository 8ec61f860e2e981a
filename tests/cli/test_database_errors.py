"""Database mistakes on the command line: a clear 'error:' line with status 2, and nothing created."""

from __future__ import annotations

import json
import secrets
import socket
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sedma_elo.cli import app

runner = CliRunner()
PG = "postgresql://postgres@127.0.0.1:5432"


@pytest.mark.parametrize(
    "command",
    [["verify"], ["export", "out.jsonl"], ["keys", "list"], ["ratings", "list"], ["void", "m-1"], ["serve"]],
    ids=lambda c: c[0] + (f" {c[1]}" if c[0] in ("keys", "ratings") else ""),
)
def test_read_command_on_a_missing_sqlite_file_says_so(
    tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify, export, serve (without --create)... on a mistyped path refuse it and create nothing."""
    for name in ("SEDMA_ELO_DATABASE_URL", "SEDMA_ELO_HOST", "SEDMA_ELO_PORT"):  # serve sets them
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    missing = tmp_path / "typo.db"
    result = runner.invoke(app, [*command, "--database-url", f"sqlite:///{missing}"], catch_exceptions=False)
    assert result.exit_code == 2
    assert (
        result.stderr.startswith("error: database ") and f"no SQLite database at {missing}" in result.stderr
    )
    assert not missing.exists()
    assert list(tmp_path.iterdir()) == []


def _imported(tmp_path: Path) -> str:
    """The URL of a SQLite ledger that ``import`` created, holding one match."""
    history = tmp_path / "h.csv"
    history.write_text(
        "match_id,played_at,player_a,player_b,winner,bad_moves_a,bad_moves_b,won_by_16_a,won_by_16_b,"
        "won_by_24_a,won_by_24_b,won_by_4_and_last_a,won_by_4_and_last_b\nm1,2024-01-01,ann,bob,a,0,0,0,0,0,0,0,0\n"
    )
    url = f"sqlite:///{tmp_path}/ledger.db"
    assert runner.invoke(app, ["import", str(history), "--database-url", url]).exit_code == 0
    return url


def test_verify_reports_on_the_database_import_created(tmp_path: Path) -> None:
    """import creates the ledger (a setting-up command), after which verify reads it."""
    url = _imported(tmp_path)
    result = runner.invoke(app, ["verify", "--database-url", url])
    assert result.exit_code == 0 and "1 matches" in result.stdout


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://user@localhost/ratings", "unsupported database 'mysql'"),
        ("sqlite:/relative.db", "not a database URL: 'sqlite:/relative.db'"),
        ("sqlite:relative.db", "not a database URL"),
        ("postgresql+psycopg2://u@h/db", "unsupported PostgreSQL driver 'psycopg2'"),
        ("sqlite://localhost/x.db", "a SQLite URL names a file, not a host"),
        ("sqlite://", "is an in-memory SQLite database, which keeps no ledger"),
        ("sqlite:///:memory:", "is an in-memory SQLite database"),
        ("sqlite:///file:x?mode=memory&uri=true", "is an in-memory SQLite database"),
        ("sqlite:///file::memory:?uri=true", "is an in-memory SQLite database"),
    ],
)
def test_bad_database_url_is_refused(tmp_path: Path, url: str, message: str) -> None:
    """A URL naming another database, driver, form or no file is refused with the forms that work."""
    result = runner.invoke(app, ["verify", "--database-url", url])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: database_url: ") and message in result.stderr


def test_unreachable_postgresql_is_an_error_line() -> None:
    """A PostgreSQL server that refuses connections is 'error: database ...: connection ...', status 2."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = runner.invoke(app, ["verify", "--database-url", f"postgresql://postgres@127.0.0.1:{port}/x"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: database postgresql")
    assert "Connection refused" in result.stderr and "Traceback" not in result.output


@pytest.mark.postgres
def test_postgresql_database_that_does_not_exist_is_an_error_line() -> None:
    """A database name that does not exist on the server is named in the error; none is created."""
    name = f"sedma_elo_missing_{secrets.token_hex(4)}"
    result = runner.invoke(app, ["export", "x.jsonl", "--database-url", f"{PG}/{name}"])
    assert result.exit_code == 2
    assert f'database "{name}" does not exist' in result.stderr


def test_password_is_not_shown_in_database_errors() -> None:
    """An error about a database URL with a password masks the password."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = runner.invoke(app, ["verify", "--database-url", f"postgresql://u:s3cret@127.0.0.1:{port}/x"])
    assert result.exit_code == 2
    assert "s3cret" not in result.stderr and "***" in result.stderr


def test_export_to_an_unwritable_path_is_an_error_line(tmp_path: Path) -> None:
    """export /proc/x.jsonl says it cannot write there (status 2); the ledger is untouched."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    assert runner.invoke(app, ["db", "upgrade", "--database-url", url]).exit_code == 0
    result = runner.invoke(app, ["export", "/proc/x.jsonl", "--database-url", url])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: (file): cannot write /proc/x.jsonl")


def test_ratings_rerate_takes_rules_option_or_argument(tmp_path: Path) -> None:
    """ratings rerate accepts --rules FILE and the positional FILE; neither is an error naming --rules."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    rules = tmp_path / "r.toml"
    assert runner.invoke(app, ["rules", "init", str(rules)]).exit_code == 0
    assert runner.invoke(app, ["db", "upgrade", "--database-url", url]).exit_code == 0
    by_option = runner.invoke(app, ["ratings", "rerate", "--rules", str(rules), "--database-url", url])
    by_argument = runner.invoke(app, ["ratings", "rerate", str(rules), "--database-url", url])
    assert by_option.exit_code == 0 and by_argument.exit_code == 0, by_option.output + by_argument.output
    neither = runner.invoke(app, ["ratings", "rerate", "--database-url", url])
    assert neither.exit_code == 2 and neither.stderr.startswith("error: --rules: is required")


def test_void_finds_a_match_by_either_spelling_of_its_id(tmp_path: Path) -> None:
    """void normalises its MATCH_ID like every id: the NFD spelling voids the match stored in NFC."""
    history = tmp_path / "h.jsonl"
    record = {c: 0 for c in ("bad_moves_a", "bad_moves_b", "won_by_16_a", "won_by_16_b")}
    record |= {c: 0 for c in ("won_by_24_a", "won_by_24_b", "won_by_4_and_last_a", "won_by_4_and_last_b")}
    record |= {
        "match_id": "r\u00e9-1",
        "played_at": "2024-01-01",
        "player_a": "a",
        "player_b": "b",
        "winner": "a",
    }
    history.write_text(json.dumps(record) + "\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path}/ledger.db"
    assert runner.invoke(app, ["import", str(history), "--database-url", url]).exit_code == 0
    result = runner.invoke(app, ["void", "re\u0301-1", "--database-url", url])
    assert result.exit_code == 0, result.output
    refused = runner.invoke(app, ["void", "m\u202e1", "--database-url", url])
    assert refused.exit_code == 2 and refused.stderr.startswith("error: match_id: must not contain")


def test_verify_exits_1_and_names_an_index_missing(tmp_path: Path) -> None:
    """verify prints the index at fault and exits 1 though every rating agrees."""
    url = _imported(tmp_path)
    with sqlite3.connect(tmp_path / "ledger.db") as conn:
        conn.execute("DROP INDEX ix_player_ratings_rank")
    result = runner.invoke(app, ["verify", "--database-url", url])
    assert result.exit_code == 1
    assert "index ix_player_ratings_rank of player_ratings is missing" in " ".join(result.stderr.split())
    assert "all equal to a pure replay. 1 index fault(s)." in " ".join(result.stdout.split())  # rich wraps
