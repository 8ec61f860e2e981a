"""The index check (storage/indexes.py): a declared index missing, an index PostgreSQL does not use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sedma_elo import Match
from sedma_elo.service import Ledger
from sedma_elo.storage import index_faults, open_database


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    """A migrated ledger holding three matches, on a new SQLite file or a new PostgreSQL database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/ledger.db"
    else:
        new: Callable[[], str] = request.getfixturevalue("new_pg_database")
        url = new()
    led = Ledger(open_database(url))
    try:
        led.ensure_version()
        led.import_matches([Match.single(f"p{i}", f"p{i + 1}", "a", match_id=f"m{i}") for i in range(3)])
        yield led
    finally:
        led.db.dispose()


def _faults(led: Ledger, *statements: str) -> list[str]:
    """The faults of ``led`` once ``statements`` ran on it."""
    with led.db.begin_write() as conn:
        for statement in statements:
            conn.exec_driver_sql(statement)
    with led.db.read.connect() as conn:
        return index_faults(conn)


def _faults_after(url: str, *statements: str) -> list[str]:
    """The faults of a new migrated ledger at ``url`` once ``statements`` ran on it."""
    led = Ledger(open_database(url))
    try:
        led.ensure_version()
        return _faults(led, *statements)
    finally:
        led.db.dispose()


def test_a_migrated_ledger_has_no_index_fault(ledger: Ledger) -> None:
    """Every declared index is there and, on PostgreSQL, valid."""
    assert _faults(ledger) == []


def test_a_dropped_index_is_named_missing(ledger: Ledger) -> None:
    """An index the schema declares and the database lacks is one fault, naming it and its table."""
    (fault,) = _faults(ledger, "DROP INDEX ix_player_ratings_rank")
    assert fault.startswith("index ix_player_ratings_rank of player_ratings is missing")


@pytest.mark.postgres
def test_a_partitioned_index_on_the_parent_alone_is_named_not_valid(
    new_pg_database: Callable[[], str],
) -> None:
    """The sequence index made again ``ON ONLY`` the parent (stop 41's import) is not valid: a fault."""
    (fault,) = _faults_after(
        new_pg_database(),
        "DROP INDEX ix_rating_changes_sequence",
        "CREATE INDEX ix_rating_changes_sequence ON ONLY rating_changes"
        " (version_id, sequence, rating_before, rating_after) INCLUDE (player_key)",
    )
    assert fault.startswith("index ix_rating_changes_sequence of rating_changes is not valid")


def test_an_index_made_again_on_other_columns_is_named_with_both_definitions(ledger: Ledger) -> None:
    """An index of the declared name on fewer columns is a fault giving what it is and what is declared."""
    assert _faults(ledger, "DROP INDEX ix_games_jobs", "CREATE INDEX ix_games_jobs ON games (status)") == [
        "index ix_games_jobs of games is (status) where storage/schema.py declares (status, created_at):"
        " its reads may scan the table instead"
    ]


def test_an_index_made_again_without_its_descending_column_is_a_fault(ledger: Ledger) -> None:
    """The rank index ascending on rating, not the leaderboard's order: a fault naming the direction."""
    (fault,) = _faults(
        ledger,
        "DROP INDEX ix_player_ratings_rank",
        "CREATE INDEX ix_player_ratings_rank ON player_ratings"
        " (version_id, rating, player_id, matches_played)",
    )
    assert fault.startswith(
        "index ix_player_ratings_rank of player_ratings is (version_id, rating, player_id, matches_played)"
        " where storage/schema.py declares (version_id, rating DESC, player_id, matches_played)"
    )


@pytest.mark.postgres
def test_a_dropped_unique_constraint_is_a_fault(new_pg_database: Callable[[], str]) -> None:
    """With the match id's unique constraint dropped nothing refuses a duplicate: one fault says so."""
    assert _faults_after(new_pg_database(), "ALTER TABLE matches DROP CONSTRAINT matches_match_id_key") == [
        "the unique constraint of matches on (match_id) is missing: nothing refuses a duplicate"
    ]


@pytest.mark.postgres
def test_a_unique_index_of_another_name_enforces_the_constraint(new_pg_database: Callable[[], str]) -> None:
    """What the database enforces counts: a unique index on the match id of any name is no fault."""
    faults = _faults_after(
        new_pg_database(),
        "ALTER TABLE matches DROP CONSTRAINT matches_match_id_key",
        "CREATE UNIQUE INDEX matches_by_id ON matches (match_id)",
    )
    assert faults == []


@pytest.mark.postgres
def test_a_partial_unique_index_does_not_enforce_the_constraint(new_pg_database: Callable[[], str]) -> None:
    """A unique index on the match id for some rows only refuses duplicates among those: still a fault."""
    faults = _faults_after(
        new_pg_database(),
        "ALTER TABLE matches DROP CONSTRAINT matches_match_id_key",
        "CREATE UNIQUE INDEX matches_by_id ON matches (match_id) WHERE NOT voided",
    )
    assert faults == [
        "the unique constraint of matches on (match_id) is missing: nothing refuses a duplicate"
    ]


def test_a_declared_index_made_partial_is_a_fault(ledger: Ledger) -> None:
    """The jobs index made again for some rows only is not the declared one: the fault says WHERE."""
    faults = _faults(
        ledger,
        "DROP INDEX ix_games_jobs",
        "CREATE INDEX ix_games_jobs ON games (status, created_at) WHERE status = 'queued'",
    )
    assert faults == [
        "index ix_games_jobs of games is (status, created_at) WHERE ... where storage/schema.py declares"
        " (status, created_at): its reads may scan the table instead"
    ]


@pytest.mark.postgres
def test_a_dropped_primary_key_is_a_fault(new_pg_database: Callable[[], str]) -> None:
    """A table without its primary key is named, with the key's columns."""
    assert _faults_after(new_pg_database(), "ALTER TABLE games DROP CONSTRAINT games_pkey") == [
        "the primary key of games (match_id) is missing: nothing refuses a second row with the same key"
    ]


@pytest.mark.postgres
def test_a_primary_key_on_other_columns_is_a_fault(new_pg_database: Callable[[], str]) -> None:
    """A primary key made again on more columns refuses less: named with both column lists."""
    faults = _faults_after(
        new_pg_database(),
        "ALTER TABLE games DROP CONSTRAINT games_pkey",
        "ALTER TABLE games ADD PRIMARY KEY (match_id, status)",
    )
    assert faults == [
        "the primary key of games is (match_id, status) where storage/schema.py declares (match_id)"
    ]
