"""An empty ledger for one hypothesis example: a new SQLite file, or the session's PostgreSQL emptied."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from needs import reset_pg
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database


@contextmanager
def empty_ledger(db_url: str, tmp: str) -> Iterator[Ledger]:
    """A ledger with its first version: ``tmp/ledger.db`` on SQLite, ``db_url`` reset on PostgreSQL."""
    if db_url.startswith("sqlite"):
        url = f"sqlite:///{Path(tmp) / 'ledger.db'}"
    else:
        reset_pg(db_url)
        url = db_url
    db = open_database(url)
    try:
        ledger = Ledger(db)  # its async reader opens only when awaited: nothing to close
        ledger.ensure_version()
        yield ledger
    finally:
        db.dispose()


class ExampleDatabase:
    """The database of one state-machine example: a new SQLite file, or ``db_url`` emptied (PostgreSQL)."""

    def __init__(self, db_url: str) -> None:
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        if db_url.startswith("sqlite"):
            self._dir = tempfile.TemporaryDirectory()
            self.url = f"sqlite:///{self._dir.name}/m.db"
        else:
            reset_pg(db_url)
            self.url = db_url

    def cleanup(self) -> None:
        """Remove the SQLite file's directory (PostgreSQL: nothing; the next example empties it)."""
        if self._dir is not None:
            self._dir.cleanup()


def run_machine(
    machine: type[RuleBasedStateMachine], db_url: str, examples: tuple[int, int], steps: int
) -> None:
    """Run ``machine`` on ``db_url``: ``examples`` (SQLite, PostgreSQL) of ``steps`` steps each.

    ``SEDMA_ELO_STATEFUL_EXAMPLES`` overrides the count. The machine reads its ``url`` attribute.
    """
    machine.url = db_url  # type: ignore[attr-defined]
    count = examples[1] if db_url.startswith("postgresql") else examples[0]
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=int(os.environ.get("SEDMA_ELO_STATEFUL_EXAMPLES", count)),
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
