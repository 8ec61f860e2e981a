"""A void's standings from its arrays (rebuild.standings_table) are what the stored rows say."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledgers import empty_ledger

from core.strategies import team_history
from sedma_elo import Match
from sedma_elo.service.ledger.answers import standing_before
from sedma_elo.service.ledger.bulk import read_changes
from sedma_elo.service.ledger.rebuild import REBUILD_CACHE_KIB, Rebuild, rebuild_cache, standings_table


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(matches=team_history(), start=st.integers(0, 11))
def test_standings_table_matches_the_stored_standings(db_url: str, matches: list[Match], start: int) -> None:
    """Every later match's ratings and games before it, from the arrays, equal standing_before's count."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        assert ledger.import_matches(matches).refused == []
        first = start % len(matches) + 1  # a sequence: they are numbered from 1 in an empty ledger
        with ledger.db.begin_write() as conn:
            raw: Any = conn.connection.driver_connection
            version = ledger._version(conn, 1)
            plan = Rebuild(raw, ledger._ph, version, first, 2**62)
            table = standings_table(plan, read_changes(raw, ledger._pg, 1, first - 1, 2**62))
            seqs = list(range(first, len(matches) + 1))
            got = table(seqs)
            assert all(
                len(before) == len(m.players)
                for (before, _), m in zip(got.values(), matches[first - 1 :], strict=True)
            )
            assert got == {s: standing_before(raw, ledger._ph, 1, s) for s in seqs}


def test_rebuild_cache_sets_sqlites_page_cache_and_puts_it_back(tmp_path: Path) -> None:
    """Inside the block SQLite's cache is REBUILD_CACHE_KIB; afterwards the one before."""
    import sqlite3

    conn = sqlite3.connect(tmp_path / "c.db")
    conn.execute("PRAGMA cache_size = -1234")
    with rebuild_cache(conn, pg=False):
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == -REBUILD_CACHE_KIB
    assert conn.execute("PRAGMA cache_size").fetchone()[0] == -1234
    conn.close()
