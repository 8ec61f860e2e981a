"""Copying a SQLite database's write-ahead log into the database file on a thread of its own.

SQLite checkpoints its WAL in whichever connection commits the write that takes the log past
``wal_autocheckpoint`` pages (1,000 by default): that commit then copies the pages into the
database file and syncs it, so every 15th or so batch of the service's writer stalled for it.
:class:`WalCheckpointer` runs ``PRAGMA wal_checkpoint(PASSIVE)`` every ``every`` seconds on a
connection of its own instead (sqlite3 releases the GIL for it, so the copy runs beside the
writer, on another core). A passive checkpoint never waits for a reader or a writer, and by
itself never lets the log start again from its beginning while writes keep coming; the writers'
own ``wal_autocheckpoint`` (:data:`WAL_BOUND_PAGES` through ``open_database(wal_bound=...)``)
stays as the bound: the commit that passes it checkpoints the few pages not copied yet and the
log restarts, so the ``-wal`` file stays near that size.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

__all__ = ["WAL_BOUND_PAGES", "WalCheckpointer"]

#: The writers' ``wal_autocheckpoint`` beside a checkpointer thread: pages (4 KB each), ~40 MB of log.
WAL_BOUND_PAGES = 10_000

_log = logging.getLogger("sedma_elo.storage")


class WalCheckpointer:
    """A daemon thread checkpointing the WAL of the SQLite file ``path`` every ``every`` seconds.

    :meth:`start` it once, :meth:`stop` it (joins the thread) when the database closes. A
    checkpoint that fails (the database busy, a full disk) is retried at the next tick; the
    writers' own bound still holds meanwhile.
    """

    def __init__(self, path: Path, every: float) -> None:
        """Checkpoint ``path`` every ``every`` seconds (> 0).

        Raises:
            ValueError: ``every`` is not positive.
        """
        if every <= 0:
            raise ValueError(f"every must be positive, not {every}")
        self.path = path
        self.every = every
        self.checkpoints = 0  # passive checkpoints run (for tests and metrics)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sedma-elo-wal-checkpoint", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (at most one checkpoint in progress finishes first)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while not self._stopping.wait(self.every):
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                except sqlite3.Error as exc:  # busy or failing now: the next tick tries again
                    _log.debug("WAL checkpoint skipped: %s", exc)
        finally:
            conn.close()
