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
from sedma_elo.errors import DatabaseError, ValidationError
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


def _sizes(url: str) -> dict[str, tuple[bool, int]]:
    """Every relation's (is an index, bytes in its main fork), by name."""
    with psycopg.connect(libpq_url(url)) as conn:
        rows = conn.execute(
            "SELECT relname, relkind = 'i', pg_relation_size(oid) FROM pg_class WHERE relkind IN ('r', 'i')"
        ).fetchall()
    return {str(n): (bool(i), int(b)) for n, i, b in rows}


@contextmanager
def _bigger_ledger(url: str) -> Iterator[Ledger]:
    """A ledger of 3,000 matches among 300 players (heaps of several blocks)."""
    led = Ledger(open_database(url))
    try:
        led.ensure_version()
        led.import_matches(
            [Match.single(f"p{i % 300}", f"p{(i * 7 + 1) % 300}", "a", match_id=f"m{i}") for i in range(3000)]
        )
        yield led
    finally:
        led.db.dispose()


@pytest.mark.postgres
def test_postgresql_reads_the_indexes_before_any_table(new_pg_database: Callable[[], str]) -> None:
    """Every index is read before the first table."""
    with _bigger_ledger(new_pg_database()) as ledger:
        read = [name for name, _ in prewarm(ledger.db)]
        sizes = _sizes(ledger.db.url)
    kinds = [sizes[name][0] for name in read]
    assert kinds == sorted(kinds, reverse=True) and kinds[0] and not kinds[-1]


@pytest.mark.postgres
def test_a_bound_reads_the_small_relations_whole_and_the_large_heaps_in_part(
    new_pg_database: Callable[[], str],
) -> None:
    """With max_bytes the read stays within it: indexes and small tables whole, matches and the
    active partition each in part."""
    with _bigger_ledger(new_pg_database()) as ledger:
        url, active = ledger.db.url, f"rating_changes_v{ledger.active_version().id}"
        whole = dict(prewarm(ledger.db))
        sizes = _sizes(url)
        large = sizes["matches"][1] + sizes[active][1]
        bound = sum(whole.values()) - large // 2
        read = dict(prewarm(ledger.db, bound))
    assert sum(read.values()) <= bound
    assert {n: b for n, b in read.items() if n not in ("matches", active)} == {
        n: b for n, b in whole.items() if n not in ("matches", active)
    }
    assert 0 < read["matches"] < sizes["matches"][1] and 0 < read[active] < sizes[active][1]


def test_a_bound_is_refused_for_sqlite_and_below_one(tmp_path: Path) -> None:
    """max_bytes for a SQLite file, or below 1, raises a ValidationError naming it."""
    with _ledger(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        for bound in (10**6, 0):
            with pytest.raises(ValidationError) as caught:
                prewarm(ledger.db, bound)
            assert caught.value.field == "max_bytes"


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


def test_the_command_refuses_a_bound_for_sqlite_with_status_2(tmp_path: Path) -> None:
    """`db prewarm --max-mb` on a SQLite ledger exits 2 naming the option."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    Ledger(open_database(url)).db.dispose()
    done = runner.invoke(app, ["db", "prewarm", "--database-url", url, "--max-mb", "5"])
    assert done.exit_code == 2 and "--max-mb applies to PostgreSQL only" in done.output
