"""Reading ahead: a thread reads the next chunk on a second connection while the caller works.

Verify reads the ledger chunk by chunk. The database's reading of the next chunk (PostgreSQL's
server; SQLite's ``sqlite3_step``, which releases the GIL) can overlap the caller's work on this
one when it runs on another connection in another thread: :func:`ahead` is that thread,
:func:`snapshot_connection` gives PostgreSQL's connection. (A rebuild's reading and writing
threads, branch rerate3, were removed: no measured gain once a re-rate's rows went into a bare
partition, docs/service-measurements.md "Re-rate on both databases".)
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ...storage.database import Database

__all__ = ["ahead", "snapshot_connection"]

_T = TypeVar("_T")


def ahead(items: Iterator[_T], threaded: bool) -> Generator[_T]:
    """``items``, each produced by a thread while the caller works on the one before. The thread
    stops when the caller closes this generator; what the thread raises is raised here.

    One item ahead at most: the thread produces the next item only once the caller has taken the
    one before, so that two items are alive at a time (verify's memory), not three."""
    if not threaded:
        yield from items
        return
    handoff: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(item: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.05)
                break
            except queue.Full:
                continue
        with handoff.all_tasks_done:  # until the caller has taken it
            while handoff.unfinished_tasks and not stop.is_set():
                handoff.all_tasks_done.wait(0.05)
        return not stop.is_set()

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((False, None))
        except BaseException as exc:  # handed to the caller, who raises it
            put((False, exc))

    thread = threading.Thread(target=produce, name="ledger-reader", daemon=True)
    thread.start()
    try:
        while True:
            more, item = handoff.get()
            handoff.task_done()
            if not more:
                if item is not None:
                    raise item
                return
            yield item
            item = None  # not kept alive while the next one is awaited
    finally:
        stop.set()
        thread.join()


@contextmanager
def snapshot_connection(db: Database, raw: Any) -> Iterator[Any]:
    """PostgreSQL: a second connection (psycopg) in the snapshot of ``raw``'s open transaction
    (``pg_export_snapshot``; REPEATABLE READ), for the block."""
    snapshot = str(raw.execute("SELECT pg_export_snapshot()").fetchone()[0])
    assert snapshot.replace("-", "").isalnum()  # e.g. 00000003-0000001B-1: safe to quote
    with db.read.connect() as c:
        reader = c.execution_options(isolation_level="REPEATABLE READ")
        with reader.begin():
            second: Any = reader.connection.driver_connection
            # A utility statement takes no parameters.
            second.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
            yield second
