"""SQLite's WAL checkpointed on a thread of its own, with the writers' own checkpoint as the bound."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sedma_elo.storage import WalCheckpointer, open_database

_PAGE = 4096


def _wal_database(path: Path, autocheckpoint: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    return conn


def _wait(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the checkpointer did not run in time")
        time.sleep(0.01)


def test_the_thread_copies_the_log_into_the_database_file(tmp_path: Path) -> None:
    """Pages committed to the WAL reach the database file without any writer checkpointing."""
    path = tmp_path / "t.db"
    conn = _wal_database(path, autocheckpoint=0)  # no checkpoint by the commits
    for i in range(200):
        conn.execute("INSERT INTO t VALUES (?, ?)", (i, "x" * 500))
    size_before = path.stat().st_size
    checkpointer = WalCheckpointer(path, every=0.01)
    checkpointer.start()
    try:
        _wait(lambda: checkpointer.checkpoints >= 2)
    finally:
        checkpointer.stop()
    assert path.stat().st_size > size_before + 100 * 500  # the rows' pages are in the file now
    conn.close()


def test_the_writers_bound_keeps_the_log_small_under_steady_writes(tmp_path: Path) -> None:
    """With the thread on, the -wal file stays near the writers' bound while writes keep coming."""
    path = tmp_path / "t.db"
    bound = 100
    conn = _wal_database(path, autocheckpoint=bound)
    checkpointer = WalCheckpointer(path, every=0.005)
    checkpointer.start()
    try:
        for i in range(3000):
            conn.execute("INSERT INTO t VALUES (?, ?)", (i, "y" * 1000))  # ~750 pages in all
        assert checkpointer.checkpoints >= 1
    finally:
        checkpointer.stop()
    # Without the writers' bound a passive checkpoint never restarts the log: it would hold every page.
    assert (tmp_path / "t.db-wal").stat().st_size < 4 * bound * (_PAGE + 24)
    conn.close()


def test_stop_ends_the_thread(tmp_path: Path) -> None:
    """``stop`` returns only once the thread has ended."""
    path = tmp_path / "t.db"
    _wal_database(path, autocheckpoint=0).close()
    checkpointer = WalCheckpointer(path, every=0.01)
    checkpointer.start()
    checkpointer.stop()
    assert not checkpointer._thread.is_alive()


def test_a_non_positive_interval_is_refused(tmp_path: Path) -> None:
    """The interval must be a positive number of seconds."""
    with pytest.raises(ValueError, match="every must be positive"):
        WalCheckpointer(tmp_path / "t.db", every=0)


def test_open_database_sets_the_writers_bound(tmp_path: Path) -> None:
    """``wal_bound`` becomes the write engine's ``wal_autocheckpoint``; without it SQLite keeps 1,000."""
    bounded = open_database(f"sqlite:///{tmp_path}/a.db", wal_bound=10_000)
    plain = open_database(f"sqlite:///{tmp_path}/b.db")
    try:
        with bounded.write.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 10_000
        with plain.write.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 1000
    finally:
        bounded.dispose()
        plain.dispose()
