"""Reading ahead: a thread reads the next chunk on a second connection while the caller works.

Verify and a rebuild (re-rate, activate, void) read the ledger chunk by chunk. The database's
reading of the next chunk (PostgreSQL's server; SQLite's ``sqlite3_step``, which releases the GIL)
can overlap the caller's work on this one (rating, writing the changes) when it runs on another
connection in another thread: :func:`ahead` is that thread, :func:`snapshot_connection` and
:func:`rebuild_reader` give the connections. A rebuild also writes a chunk's changes on a thread
(:func:`behind`) while the next chunk is rated.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from ...storage.database import Database

__all__ = ["Readers", "ahead", "behind", "rebuild_reader", "snapshot_connection"]

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
def behind(work: Callable[[_T], object], threaded: bool = True) -> Iterator[Callable[[_T], object]]:
    """A ``submit(item)`` for the block that runs ``work(item)`` on a thread and returns at once,
    after the item before it is done (one item in work at most; the items' order is kept). What
    ``work`` raised is raised by the next ``submit`` or at the end of the block; when the block
    itself raises, the item in work is finished first (its error, if any, is dropped). Not
    ``threaded``: ``submit`` is ``work`` itself, run in line (as :func:`ahead`'s flag)."""
    if not threaded:
        yield work
        return
    pool = ThreadPoolExecutor(1, thread_name_prefix="ledger-writer")
    pending: Future[object] | None = None

    def submit(item: _T) -> None:
        nonlocal pending
        if pending is not None:
            pending.result()
        pending = pool.submit(work, item)

    try:
        yield submit
        if pending is not None:
            pending.result()
    finally:
        pool.shutdown(wait=True)


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


@dataclass(frozen=True)
class Readers:
    """A rebuild's two connections besides its own: ``chunks`` for the ledger's rows (read by a
    thread), ``lookup`` for player ids (a player row is never changed or deleted, so any later
    read gives a key's id)."""

    chunks: Any
    lookup: Any


@contextmanager
def rebuild_reader(db: Database, raw: Any, pg: bool) -> Iterator[Readers | None]:
    """The connections a rebuild in ``raw``'s write transaction reads on while a thread writes on
    ``raw`` (PostgreSQL), or None (SQLite: everything on ``raw``, in line).

    A rebuild holds the ledger exclusively and reads ``matches`` before it changes any of them (a
    void flags its match after rating), so ``raw``'s snapshot holds the rows it reads: the chunks
    are read on a second connection in that snapshot, the player ids looked up on a third (on the
    chunks' one a look-up would wait for a whole chunk). On SQLite a reading thread measured no
    faster (ATP file, 5.28 and 5.47 s against 5.30 and 5.20 s in line, load 4): a chunk is one
    packed text there, cheap to read, and the writes cannot overlap (:mod:`.versions`).
    """
    if not pg:
        yield None
        return
    with db.read.connect() as lookup, snapshot_connection(db, raw) as second:
        yield Readers(second, lookup.connection.driver_connection)
