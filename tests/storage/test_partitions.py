"""PostgreSQL's rating changes, one partition per version (storage/partitions.py, migration 0012):
a re-rate's table built bare then indexed and attached, the migration both ways, reads during a
re-rate."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from sedma_elo import REFERENCE_RULES, Match
from sedma_elo.batch.history import LinedMatches
from sedma_elo.service import Ledger
from sedma_elo.service.ledger import rebuild
from sedma_elo.storage import downgrade, open_database, upgrade
from sedma_elo.storage.partitions import is_version_table, partition_name

pytestmark = pytest.mark.postgres

_ROWS = "SELECT version_id, player_key, sequence, rating_before, rating_after FROM rating_changes"
#: Each of the parent's indexes and whether it is valid.
_VALID = (
    "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
    " WHERE i.indrelid = 'rating_changes'::regclass ORDER BY 1"
)
#: The partitions' parts of the sequence index.
_SEQUENCE_PARTS = (
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
    " WHERE i.inhparent = 'ix_rating_changes_sequence'::regclass ORDER BY 1"
)


def _matches(n: int) -> list[Match]:
    return [
        Match.single(f"p{i % 7}", f"p{(i + 1 + i % 3) % 7}", "ab"[i % 2], match_id=f"m{i}") for i in range(n)
    ]


@pytest.fixture
def ledger(new_pg_database: Any) -> Iterator[Ledger]:
    """A PostgreSQL ledger of 40 matches imported (``sedma-elo import``'s path) into an active
    version 1, and an inactive re-rate, version 2."""
    led = Ledger(open_database(new_pg_database()))
    try:
        led.ensure_version()
        assert led.import_history(LinedMatches(_matches(40), list(range(1, 41)))).refused == []
        led.rerate(REFERENCE_RULES.replace(version="9", k_top=20), "k20", activate=False)
        yield led
    finally:
        led.db.dispose()


def _partitions(led: Ledger) -> dict[str, str]:
    """Each partition of rating_changes and the values it holds."""
    rows = led.db.query(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
        " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'rating_changes'::regclass"
    )
    return {str(name): str(bound) for name, bound in rows}


def test_is_version_table_names_the_partitions_only() -> None:
    """A version's table name is recognised; the parent and other tables are not."""
    assert is_version_table(partition_name(12))
    assert not is_version_table("rating_changes")
    assert not is_version_table("rating_changes_v1x")


def test_each_version_is_a_partition_of_its_own(ledger: Ledger) -> None:
    """The first version and a re-rate's each have a partition bound to their id, holding its rows."""
    assert _partitions(ledger) == {
        "rating_changes_v1": "FOR VALUES IN (1)",
        "rating_changes_v2": "FOR VALUES IN (2)",
    }
    for vid in (1, 2):
        own = ledger.db.query(f"SELECT count(*) FROM {partition_name(vid)}")
        assert own == [(80,)]  # two players a match, 40 matches


@pytest.mark.parametrize("vid", [1, 2], ids=["import", "rerate"])
def test_a_filled_partition_has_both_indexes_attached_to_the_parents(ledger: Ledger, vid: int) -> None:
    """An import's and a re-rate's tables were indexed before their attach, both to the parent's indexes."""
    name = partition_name(vid)
    got = ledger.db.query(
        "SELECT p.relname, c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " JOIN pg_class p ON p.oid = i.inhparent WHERE c.relname LIKE %s",
        (f"{name}%",),
    )
    assert sorted(got) == [
        ("ix_rating_changes_sequence", f"{name}_sequence"),
        ("rating_changes", name),
        ("rating_changes_pkey", f"{name}_pkey"),
    ]


def test_the_parents_indexes_stay_valid(ledger: Ledger) -> None:
    """Every partition has its part of each of the parent's indexes, so both are valid."""
    assert ledger.db.query(_VALID) == [("ix_rating_changes_sequence", True), ("rating_changes_pkey", True)]


@pytest.mark.parametrize("vid", [1, 2], ids=["import", "rerate"])
def test_a_filled_partitions_rows_are_read_off_the_index_alone_at_once(ledger: Ledger, vid: int) -> None:
    """COPY FREEZE: an import's and a re-rate's rows are all-visible, read with no heap fetch."""
    with ledger.db.write.connect() as conn:
        raw: Any = conn.connection.driver_connection
        raw.execute("SET enable_seqscan = off")
        raw.execute("SET enable_bitmapscan = off")
        plan = raw.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT sequence, player_key, rating_before, rating_after"
            f" FROM rating_changes WHERE version_id = {vid} AND sequence > 0 AND sequence <= 40"
        ).fetchone()[0]
        raw.rollback()
    top = (plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"]
    assert top["Node Type"] == "Index Only Scan"
    assert (top["Actual Rows"], top["Heap Fetches"]) == (80, 0)


def test_the_migration_down_and_up_keeps_every_change(ledger: Ledger) -> None:
    """Down to 0011_page: one plain table with the same rows; up again: a partition per version, same rows."""
    rows = sorted(ledger.db.query(_ROWS))
    downgrade(ledger.db, "0011_page")
    assert ledger.db.query("SELECT relkind FROM pg_class WHERE relname = 'rating_changes'") == [("r",)]
    assert _partitions(ledger) == {}
    assert sorted(ledger.db.query(_ROWS)) == rows
    upgrade(ledger.db)
    assert set(_partitions(ledger)) == {"rating_changes_v1", "rating_changes_v2"}
    assert sorted(ledger.db.query(_ROWS)) == rows
    for vid in (1, 2):
        own = sorted(ledger.db.query(f"SELECT * FROM {partition_name(vid)}"))
        assert own == [r for r in rows if r[0] == vid]
    assert ledger.verify().ok


def test_the_repair_migration_indexes_an_import_that_lost_its_sequence_index(ledger: Ledger) -> None:
    """Migration 0013 builds and attaches the sequence index an import before it left on no partition."""
    # What the import did from 0012 to 0013: the index dropped, then made again from its catalog
    # definition, which reads ON ONLY the parent.
    with ledger.db.write.begin() as conn:
        conn.exec_driver_sql("DROP INDEX ix_rating_changes_sequence")
        conn.exec_driver_sql(
            "CREATE INDEX ix_rating_changes_sequence ON ONLY rating_changes"
            " (version_id, sequence, rating_before, rating_after) INCLUDE (player_key)"
        )
    assert ledger.db.query(_SEQUENCE_PARTS) == []
    downgrade(ledger.db, "0012_partitions")
    upgrade(ledger.db)
    assert ledger.db.query(_SEQUENCE_PARTS) == [
        ("rating_changes_v1_sequence",),
        ("rating_changes_v2_sequence",),
    ]
    assert ledger.db.query(_VALID) == [("ix_rating_changes_sequence", True), ("rating_changes_pkey", True)]
    assert ledger.verify().ok


def test_reads_go_on_while_a_rerate_attaches_its_partition(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the attach, before its commit, another connection reads rating_changes without waiting."""
    seen: list[Any] = []
    real = rebuild.Rebuild.write_players
    dsn = ledger.db.write.url.set(drivername="postgresql").render_as_string(hide_password=False)

    def read_meanwhile(plan: rebuild.Rebuild) -> None:
        def read() -> None:
            with psycopg.connect(dsn, autocommit=True) as other:
                other.execute("SET lock_timeout = '3s'")
                seen.append(
                    other.execute("SELECT version_id, count(*) FROM rating_changes GROUP BY 1").fetchall()
                )

        reader = threading.Thread(target=read)
        reader.start()
        reader.join()
        real(plan)

    monkeypatch.setattr(rebuild.Rebuild, "write_players", read_meanwhile)
    ledger.rerate(REFERENCE_RULES.replace(version="8", k_top=24), "k24")
    assert sorted(seen[0]) == [(1, 80), (2, 80)]  # the uncommitted version 3 is not seen yet
    assert ledger.db.query("SELECT count(*) FROM rating_changes WHERE version_id = 3") == [(80,)]
