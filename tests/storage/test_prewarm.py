"""Prewarming (storage/prewarm.py, `sedma-elo db prewarm`): what is read, and a role that cannot."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from sedma_elo import Match
from sedma_elo.cli import app
from sedma_elo.errors import DatabaseError
from sedma_elo.service import Ledger
from sedma_elo.storage import libpq_url, open_database
from sedma_elo.storage.prewarm import prewarm

runner = CliRunner()


@contextmanager
def _ledger(url: str) -> Iterator[Ledger]:
    """A ledger of three matches re-rated into a second, active version."""
    led = Ledger(open_database(url))
    try:
        led.ensure_version()
        led.import_matches([Match.single(f"p{i}", f"p{i + 1}", "a", match_id=f"m{i}") for i in range(3)])
        led.rerate(led.active_version().rules, label="again", activate=True)
        yield led
    finally:
        led.db.dispose()


@pytest.mark.postgres
def test_postgresql_reads_the_active_versions_relations_and_not_the_feed(
    new_pg_database: Callable[[], str],
) -> None:
    """On PostgreSQL the read tables, their indexes and the active version's partition are read;
    the change feed and the inactive version's partition are not."""
    with _ledger(new_pg_database()) as ledger:
        active = ledger.active_version().id
        read = dict(prewarm(ledger.db))
    wanted = {"matches", "matches_pkey", "players", "players_player_id_key", "player_ratings"}
    assert wanted | {f"rating_changes_v{active}", f"rating_changes_v{active}_pkey"} <= set(read)
    assert not {"change_events", f"rating_changes_v{active - 1}"} & set(read)
    assert read["matches"] > 0


def test_sqlite_reads_the_whole_file(tmp_path: Path) -> None:
    """On SQLite the database file is read through: its name and its size in bytes."""
    path = tmp_path / "ledger.db"
    with _ledger(f"sqlite:///{path}") as ledger:
        assert prewarm(ledger.db) == [("ledger.db", path.stat().st_size)]


@pytest.mark.postgres
def test_a_role_that_cannot_create_the_extension_is_told_what_to_ask_for(
    new_pg_database: Callable[[], str],
) -> None:
    """A role without the right to create pg_prewarm gets a DatabaseError naming the statement."""
    url = new_pg_database()
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS sedma_elo_no_extension")
        conn.execute("CREATE ROLE sedma_elo_no_extension LOGIN")
    db = open_database(url.replace("postgres@", "sedma_elo_no_extension@"), migrate=False)
    try:
        with pytest.raises(DatabaseError, match="CREATE EXTENSION pg_prewarm"):
            prewarm(db)
    finally:
        db.dispose()
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            conn.execute("DROP ROLE sedma_elo_no_extension")


def test_the_command_reports_what_it_read(tmp_path: Path) -> None:
    """`db prewarm` on a SQLite ledger says how much it read and exits 0."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    Ledger(open_database(url)).db.dispose()
    done = runner.invoke(app, ["db", "prewarm", "--database-url", url])
    assert done.exit_code == 0, done.output
    assert "Read 1 relation," in done.output


def test_the_command_refuses_a_missing_file_with_status_2(tmp_path: Path) -> None:
    """`db prewarm` of a SQLite file that does not exist exits 2 and creates nothing."""
    missing = tmp_path / "nope.db"
    done = runner.invoke(app, ["db", "prewarm", "--database-url", f"sqlite:///{missing}"])
    assert done.exit_code == 2 and "no SQLite database" in done.output
    assert not missing.exists()
