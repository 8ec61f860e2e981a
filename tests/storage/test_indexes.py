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


def _faults(led: Ledger) -> list[str]:
    with led.db.read.connect() as conn:
        return index_faults(conn)


def test_a_migrated_ledger_has_no_index_fault(ledger: Ledger) -> None:
    """Every declared index is there and, on PostgreSQL, valid."""
    assert _faults(ledger) == []


def test_a_dropped_index_is_named_missing(ledger: Ledger) -> None:
    """An index the schema declares and the database lacks is one fault, naming it and its table."""
    with ledger.db.begin_write() as conn:
        conn.exec_driver_sql("DROP INDEX ix_player_ratings_rank")
    (fault,) = _faults(ledger)
    assert fault.startswith("index ix_player_ratings_rank of player_ratings is missing")


@pytest.mark.postgres
def test_a_partitioned_index_on_the_parent_alone_is_named_not_valid(
    new_pg_database: Callable[[], str],
) -> None:
    """The sequence index made again ``ON ONLY`` the parent (stop 41's import) is not valid: a fault."""
    led = Ledger(open_database(new_pg_database()))
    try:
        led.ensure_version()
        led.import_matches([Match.single("a", "b", "a", match_id="m1")])
        with led.db.begin_write() as conn:
            conn.exec_driver_sql("DROP INDEX ix_rating_changes_sequence")
            conn.exec_driver_sql(
                "CREATE INDEX ix_rating_changes_sequence ON ONLY rating_changes"
                " (version_id, sequence, rating_before, rating_after) INCLUDE (player_key)"
            )
        (fault,) = _faults(led)
        assert fault.startswith("index ix_rating_changes_sequence of rating_changes is not valid")
    finally:
        led.db.dispose()
