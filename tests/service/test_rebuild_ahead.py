"""A re-rate whose write of a chunk's changes fails leaves the ledger as it was (PostgreSQL: the
version's bare partition too)."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest
from ledgers import empty_ledger

from sedma_elo import REFERENCE_RULES, Match
from sedma_elo.service.ledger import bulk, versions


def test_a_rerate_whose_write_fails_leaves_the_ledger_as_it_was(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second chunk's write fails (after the first was written): the re-rate raises, no version
    or change of it stays, the ledger verifies and the next re-rate succeeds."""
    matches = [Match.single(f"p{i % 5}", f"p{(i + 1) % 5}", "a", match_id=f"m{i}") for i in range(12)]
    monkeypatch.setattr(bulk, "CHUNK", 3)
    real = versions.write_changes
    calls: list[int] = []

    def fail_second(raw: Any, pg: bool, version_id: int, changes: Any, fresh: str | None = None) -> None:
        calls.append(version_id)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        real(raw, pg, version_id, changes, fresh)

    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        assert ledger.import_matches(matches).refused == []
        before = ledger.db.query("SELECT version_id, count(*) FROM rating_changes GROUP BY version_id")
        monkeypatch.setattr(versions, "write_changes", fail_second)
        with pytest.raises(RuntimeError, match="disk full"):
            ledger.rerate(REFERENCE_RULES.replace(version="9", k_top=20), "k20")
        assert len(calls) == 2
        assert (
            ledger.db.query("SELECT version_id, count(*) FROM rating_changes GROUP BY version_id") == before
        )
        assert [v.label for v in ledger.versions()] == [REFERENCE_RULES.label]
        if not db_url.startswith("sqlite"):  # the re-rate's bare partition was rolled back too
            tables = "SELECT relname FROM pg_class WHERE relname ~ '^rating_changes_v[0-9]+$'"
            assert ledger.db.query(tables) == [("rating_changes_v1",)]
        monkeypatch.setattr(versions, "write_changes", real)
        assert ledger.verify().ok
        assert ledger.rerate(REFERENCE_RULES.replace(version="9", k_top=20), "k20").active
