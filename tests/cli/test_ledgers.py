"""cli/ledgers.py: the ledger a command opens, checked before anything is created."""

from __future__ import annotations

from pathlib import Path

import pytest

from sedma_elo.cli.ledgers import create_database, open_ledger
from sedma_elo.errors import DatabaseError


def test_a_missing_sqlite_file_is_refused_and_not_created(tmp_path: Path) -> None:
    """Without create, a mistyped path is an error naming it, and no file appears."""
    path = tmp_path / "typo.db"
    with pytest.raises(DatabaseError, match="no SQLite database at"), open_ledger(f"sqlite:///{path}"):
        pass
    assert not path.exists()


def test_create_sets_up_a_ledger_with_its_first_version(tmp_path: Path) -> None:
    """With create, the file is made, migrated and given an active ratings version."""
    url = f"sqlite:///{tmp_path / 'new.db'}"
    with open_ledger(url, create=True) as ledger:
        assert [v.active for v in ledger.versions()] == [True]
    with open_ledger(url) as ledger:  # now it exists: opened without create
        assert ledger.ledger_size() == 0


def test_create_database_makes_the_schema_only(tmp_path: Path) -> None:
    """create_database leaves a file that open_ledger then accepts without create."""
    path = tmp_path / "schema.db"
    create_database(f"sqlite:///{path}")
    assert path.exists()
    with open_ledger(f"sqlite:///{path}") as ledger:
        assert len(ledger.versions()) == 1
