"""``Ledger.import_matches``: a batch that fails for a reason not its matches' stops the import."""

from __future__ import annotations

from pathlib import Path

import pytest

from sedma_elo import Match
from sedma_elo.errors import NotFoundError
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database


def test_an_import_without_an_active_version_raises_and_stores_nothing(tmp_path: Path) -> None:
    """No active version: NotFoundError is raised (it was reported as three refusals "m-0: None")."""
    db = open_database(f"sqlite:///{tmp_path / 'ledger.db'}")
    try:
        ledger = Ledger(db)
        with pytest.raises(NotFoundError, match="no active ratings version"):
            ledger.import_matches([Match.single("ann", "ben", "a", match_id=f"m-{i}") for i in range(3)])
        assert list(ledger.ledger()) == []
    finally:
        db.dispose()
