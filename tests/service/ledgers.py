"""An empty ledger for one hypothesis example: a new SQLite file, or the session's PostgreSQL emptied."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import _reset_pg
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database


@contextmanager
def empty_ledger(db_url: str, tmp: str) -> Iterator[Ledger]:
    """A ledger with its first version: ``tmp/ledger.db`` on SQLite, ``db_url`` reset on PostgreSQL."""
    if db_url.startswith("sqlite"):
        url = f"sqlite:///{Path(tmp) / 'ledger.db'}"
    else:
        _reset_pg(db_url)
        url = db_url
    db = open_database(url)
    try:
        ledger = Ledger(db)  # its async reader opens only when awaited: nothing to close
        ledger.ensure_version()
        yield ledger
    finally:
        db.dispose()
