"""Verify's reads (service/ledger/packed.py): the packed SQLite chunks and changes hold what the
row-by-row reads hold, the sort by (sequence, key), the covering sequence index, and the
read-ahead's depth (service/ledger/ahead.py ``ahead``)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from ledgers import empty_ledger

from sedma_elo import REFERENCE_RULES, Match
from sedma_elo.service import Ledger
from sedma_elo.service.ledger import ahead, bulk, packed

#: Six players in one-against-one and two-against-two matches, with statistics, one voided later.
MATCHES = [
    Match.single(f"p{i % 6}", f"p{(i + 2) % 6}", ("a", "b", "draw")[i % 3], match_id=f"s{i}")
    for i in range(9)
] + [Match(("p0", "p1"), ("p2", "p3"), "b", {}, f"t{i}") for i in range(3)]


def _raw_read(ledger: Ledger, read: Any) -> Any:
    """``read(raw, pg)`` inside one read transaction of the ledger's database."""
    with ledger.db.read.connect() as conn, conn.begin():
        return read(conn.connection.driver_connection, ledger.db.dialect == "postgresql")


@pytest.fixture
def ledger(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ledger]:
    """The matches imported in chunks of four rows, match s4 voided."""
    monkeypatch.setattr(bulk, "CHUNK", 4)
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as made:
        made.import_matches(MATCHES)
        made.void("s4", "test")
        yield made


def test_verify_chunks_hold_the_rows_of_read_chunks(ledger: Ledger) -> None:
    """Each packed chunk has read_chunks' range and rows, in sequence order, the voided row left out."""

    def both(raw: Any, pg: bool) -> tuple[list[Any], list[Any]]:
        mine = [(lo, hi, rows.tolist()) for lo, hi, rows in packed.verify_chunks(raw, pg, 0, 2**62)]
        theirs = [(lo, hi, rows.tolist()) for lo, hi, rows in bulk.read_chunks(raw, pg, 0, 2**62)]
        return mine, theirs

    mine, theirs = _raw_read(ledger, both)
    assert mine == theirs
    assert sum(len(rows) for _, _, rows in mine) == len(MATCHES) - 1


def test_stored_changes_hold_the_changes_of_read_changes(ledger: Ledger) -> None:
    """A version's packed changes over a range equal read_changes' over the same range."""

    def both(raw: Any, pg: bool) -> tuple[list[Any], list[Any]]:
        return (
            packed.stored_changes(raw, pg, 1, 2, 9).tolist(),
            bulk.read_changes(raw, pg, 1, 2, 9).tolist(),
        )

    mine, theirs = _raw_read(ledger, both)
    assert mine == theirs
    assert len(mine) > 0


def test_query_packed_of_no_row_is_an_empty_array(tmp_path: Any) -> None:
    """A packed query that matches no row gives a (0, columns) array, not an error."""
    with empty_ledger("sqlite://", str(tmp_path)) as made:
        got = _raw_read(made, lambda raw, _: packed.query_packed(raw, ["sequence", "winner"], "FROM matches"))
    assert got.shape == (0, 2)


@pytest.mark.parametrize("big", [False, True])
def test_by_sequence_key_sorts_by_sequence_then_key(big: bool) -> None:
    """Rows come out by sequence then key, with the one-key sort and with the lexsort a sequence past
    2**32 needs."""
    rng = np.random.default_rng(7)
    seqs = rng.integers(0, 50, 400) + (2**40 if big else 0)
    rows = np.column_stack([seqs, rng.integers(0, 1000, 400), np.arange(400), np.arange(400)])
    got = packed.by_sequence_key(rows.astype(np.int64))
    assert sorted(map(tuple, rows.tolist())) == list(map(tuple, got.tolist()))


def test_sqlite_reads_changes_off_the_covering_sequence_index(tmp_path: Any) -> None:
    """On SQLite a version's changes by sequence range come from the sequence index alone (0010)."""
    with empty_ledger("sqlite://", str(tmp_path)) as made:
        plan = made.db.query(
            "EXPLAIN QUERY PLAN SELECT sequence, player_key, rating_before, rating_after"
            " FROM rating_changes WHERE version_id = 1 AND sequence > 0 AND sequence <= 10"
        )
    assert any("COVERING INDEX ix_rating_changes_sequence" in str(row[-1]) for row in plan)


def test_read_ahead_produces_one_item_ahead_at_most() -> None:
    """The reading thread starts an item only once the caller has taken the one before."""
    produced: list[int] = []

    def items() -> Iterator[int]:
        for i in range(6):
            produced.append(i)
            yield i

    seen = []
    for item in ahead.ahead(items(), True):
        # The caller holds item i: the thread may have produced i + 1, not i + 2.
        seen.append((item, max(produced)))
    assert [i for i, _ in seen] == list(range(6))
    assert all(top <= item + 1 for item, top in seen)


def test_read_ahead_raises_what_the_thread_raised() -> None:
    """An error of the reading thread reaches the caller after the items before it."""

    def items() -> Iterator[int]:
        yield 1
        raise ValueError("bad chunk")

    got = []
    with pytest.raises(ValueError, match="bad chunk"):
        for item in ahead.ahead(items(), True):
            got.append(item)
    assert got == [1]


def test_verify_with_two_versions_is_ok_and_counts_each_match_once(ledger: Ledger) -> None:
    """Verify over packed chunks with a second, inactive version passes and counts the ledger once."""
    ledger.rerate(REFERENCE_RULES.replace(version="9", k_top=20), "k20", activate=False)
    report = ledger.verify()
    assert report.ok, report.mismatches
    assert (report.versions, report.matches) == (2, len(MATCHES) - 1)
