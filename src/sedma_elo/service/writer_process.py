"""The group writer in a process of its own, fed by the API process over a pipe.

Why a process: a match write costs the API process's event loop about 200 µs of CPU (HTTP, the
key, validation) and the writer about as much again (the fold, SQL, the answer text). On threads
of one process both hold one GIL, so a write-heavy service tops out at one core however many the
machine has, and the writer's database calls wait for the GIL the event loop holds. A writer
process has a GIL of its own (docs/service.md, "The writer process", has the figures).

The pipe carries pickled messages:

* API -> writer: a list of ``(token, Submission)`` (the writes of one turn of the event loop),
  ``None`` to stop after what is queued;
* writer -> API: ``"ready"`` once its database is open, then per batch a list of
  ``(token, ApplyOutcome or exception)``.

The writer process applies each batch with :func:`~sedma_elo.service.writer.apply_batch` on a
:class:`~sedma_elo.service.ledger.WriterSession` of its own, exactly as a writer thread does. An answer
comes after its batch committed; the API process notes the commit
(:meth:`~sedma_elo.service.ledger.base.LedgerBase.note_change`) before it answers anyone, so the read
cache stays fresh for its own writes. A writer process that dies fails what it held with 503 (the
submissions may or may not have committed: a repeat with the same body tells) and a new one starts.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection

from ..errors import UnavailableError
from .ledger import Ledger
from .observability.metrics import MULTIPROC_ENV, WRITE_QUEUE, WRITER_RESTARTS, record_batch
from .payload import Submission
from .writer import LoopWaiter, Result, Submitter, Waiter, answer, apply_batch

__all__ = ["ProcessWriter", "WriterConfig"]

_LOG = logging.getLogger("sedma_elo.service.writer")
_READY = "ready"
#: Seconds a new writer process may take to import, open and migrate the database.
START_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class WriterConfig:
    """What the writer process needs: the database and the group writer's settings."""

    database_url: str
    max_batch: int = 512
    #: Connections of the writer process's engine, without overflow (its session holds one).
    pool_size: int = 2
    #: SQLite: the writers' ``wal_autocheckpoint`` (pages), or None for SQLite's own.
    wal_bound: int | None = None


def serve_writer(conn: Connection, config: WriterConfig) -> None:
    """The writer process's body: apply what ``conn`` brings until ``None`` or the pipe closes.

    One thread: it drains the pipe into a backlog, applies the backlog's first ``max_batch``
    submissions in one transaction and answers them in one message (a second thread to read the
    pipe would only contend for this process's GIL).
    """
    # The API process counts this process's batches from its answers; with prometheus-client's
    # multiprocess mode on, this process would add its own files to the sums.
    os.environ.pop(MULTIPROC_ENV, None)
    # Ctrl-C or a supervisor's SIGTERM reach the whole process group: this process stops when the
    # API process says so or is gone (the pipe's end), after answering what it was handed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from ..storage import open_database
    from .runtime import tune_process

    db = open_database(
        config.database_url, pool_size=config.pool_size, max_overflow=0, wal_bound=config.wal_bound
    )
    ledger = Ledger(db)
    backlog: collections.deque[tuple[int, Submission]] = collections.deque()
    stopping = False
    tune_process()
    try:
        with ledger.writer_session() as session:
            conn.send_bytes(pickle.dumps(_READY))
            while backlog or not stopping:
                # Block only with nothing in hand; take whatever else has arrived meanwhile.
                while not stopping and (not backlog or conn.poll(0)):
                    try:
                        message: list[tuple[int, Submission]] | None = pickle.loads(conn.recv_bytes())
                    except EOFError:  # the API process is gone: finish the backlog
                        message = None
                    if message is None:
                        stopping = True
                    else:
                        backlog.extend(message)
                if not backlog:
                    continue
                batch = [backlog.popleft() for _ in range(min(config.max_batch, len(backlog)))]
                results, _ = apply_batch(session, [sub for _, sub in batch])
                with contextlib.suppress(OSError):  # the API process is gone: nobody waits
                    conn.send_bytes(
                        _dumps([(token, r) for (token, _), r in zip(batch, results, strict=True)])
                    )
    finally:
        db.dispose()
        conn.close()


def _dumps(replies: list[tuple[int, Result]]) -> bytes:
    """``replies`` pickled; an exception that does not pickle travels as a 503 saying what it was."""
    try:
        return pickle.dumps(replies, pickle.HIGHEST_PROTOCOL)
    except Exception:  # an unexpected error object (a driver's) that cannot cross the pipe
        safe: list[tuple[int, Result]] = []
        for token, result in replies:
            try:
                pickle.dumps(result)
            except Exception:
                why = f"the writer failed: {type(result).__name__}: {result}"
                result = UnavailableError(why, retry_after=1.0)
            safe.append((token, result))
        return pickle.dumps(safe, pickle.HIGHEST_PROTOCOL)


class ProcessWriter(Submitter):
    """A :class:`Submitter` whose batches are applied by a writer process (see the module docstring).

    ``ledger`` is the API process's own: its :meth:`note_change` is called for every batch answered.
    """

    def __init__(
        self, config: WriterConfig, ledger: Ledger, *, max_queue: int = 10_000, timeout: float | None = None
    ) -> None:
        """A writer process for ``config``: at most ``max_queue`` submissions wait, each ``timeout`` s."""
        super().__init__(max_queue=max_queue, timeout=timeout)
        self.config = config
        self.ledger = ledger
        self._pending: dict[int, Waiter] = {}
        self._tokens = itertools.count()
        self._send_lock = threading.Lock()
        self._outgoing: list[tuple[int, Submission]] = []
        self._conn: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        self._receiver: threading.Thread | None = None
        self._stopping = False
        self.batches = 0
        self.applied = 0
        self.restarts = 0

    def start(self) -> None:
        """Start the writer process and wait until its database is open.

        Raises:
            UnavailableError: the writer process did not start within :data:`START_TIMEOUT` s.
        """
        self._conn, self._process = self._spawn()
        self._receiver = threading.Thread(target=self._receive, name="sedma-elo-writer-answers", daemon=True)
        self._receiver.start()

    def _spawn(self) -> tuple[Connection, multiprocessing.process.BaseProcess]:
        # spawn, not fork: the API process has threads (pools, the event loop) that fork would copy
        # in whatever state they were in.
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe(duplex=True)
        process = context.Process(
            target=serve_writer, args=(theirs, self.config), name="sedma-elo-writer", daemon=True
        )
        process.start()
        theirs.close()
        if not ours.poll(START_TIMEOUT) or pickle.loads(ours.recv_bytes()) != _READY:
            process.kill()
            raise UnavailableError("the writer process did not start", retry_after=5.0)
        return ours, process

    def stop(self) -> None:
        """Let the writer process finish what it was handed, then stop it and the answers' thread."""
        self._stopping = True
        conn, process = self._conn, self._process
        if conn is not None:
            with self._send_lock, contextlib.suppress(OSError):  # already gone
                conn.send_bytes(pickle.dumps(None))
        if self._receiver is not None:
            self._receiver.join()
        if process is not None:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()

    def waiting(self) -> int:
        """How many submissions wait for the writer process's answer."""
        return len(self._pending)

    def _enqueue(self, sub: Submission, waiter: Waiter) -> None:
        token = next(self._tokens)
        self._pending[token] = waiter
        if not isinstance(waiter, LoopWaiter):
            self._send([(token, sub)])
            return
        # Requests of one turn of the event loop go in one message: one pickle and one write for
        # all of them, and one wake-up of the writer process.
        with self._send_lock:
            self._outgoing.append((token, sub))
            first = len(self._outgoing) == 1
        if first:
            waiter.loop.call_soon(self._flush)

    def _flush(self) -> None:
        with self._send_lock:
            items, self._outgoing = self._outgoing, []
        self._send(items)

    def _send(self, items: list[tuple[int, Submission]]) -> None:
        """Hand ``items`` to the writer process; if none runs, each gets 503 (nothing was applied)."""
        data = pickle.dumps(items, pickle.HIGHEST_PROTOCOL)
        try:
            with self._send_lock:
                if self._conn is None:
                    raise OSError("no writer process")
                self._conn.send_bytes(data)
        except OSError:
            waiters = [w for w in (self._pending.pop(token, None) for token, _ in items) if w is not None]
            WRITE_QUEUE.dec(len(waiters))
            error = UnavailableError("the writer process is restarting; retry shortly", retry_after=1.0)
            answer(waiters, [error] * len(waiters))

    def _receive(self) -> None:
        """Settle each answered batch; on a dead writer process fail what it held and start another."""
        while True:
            conn = self._conn
            if conn is None:  # stopped while no writer process ran
                self._fail_pending("the service is stopping")
                return
            try:
                replies: list[tuple[int, Result]] = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                if self._stopping:
                    self._fail_pending("the service is stopping")
                    return
                self._restart()
                continue
            self._settle(replies)

    def _settle(self, replies: list[tuple[int, Result]]) -> None:
        self.ledger.note_change()  # before anyone is answered: the read cache's freshness
        waiters: list[Waiter] = []
        results: list[Result] = []
        for token, result in replies:
            waiter = self._pending.pop(token, None)
            if waiter is not None:
                waiters.append(waiter)
                results.append(result)
        created = sum(1 for r in results if not isinstance(r, BaseException) and r.status == "created")
        WRITE_QUEUE.dec(len(replies))
        self.batches += 1
        self.applied += len(replies)
        record_batch(len(replies), created)
        answer(waiters, results)

    def _fail_pending(self, why: str) -> None:
        tokens = list(self._pending)
        waiters = [self._pending.pop(token) for token in tokens]
        if waiters:
            WRITE_QUEUE.dec(len(waiters))
            error = UnavailableError(
                f"{why}; the write may or may not have been applied: repeat the same body to learn",
                retry_after=1.0,
            )
            answer(waiters, [error] * len(waiters))

    def _restart(self) -> None:
        """A new writer process after the last one died; what the dead one held gets 503."""
        with self._send_lock:
            old = self._conn
            self._conn = None
        if old is not None:
            old.close()
        self._fail_pending("the writer process stopped")
        self.restarts += 1
        WRITER_RESTARTS.inc()
        _LOG.error("the writer process stopped (exit code %s); starting another", self._exitcode())
        while not self._stopping:
            try:
                conn, process = self._spawn()  # not under the lock: the event loop would wait
            except UnavailableError:
                _LOG.error("the writer process did not start; trying again")
                continue
            with self._send_lock:
                self._conn, self._process = conn, process
            return

    def _exitcode(self) -> int | None:
        if self._process is None:
            return None
        self._process.join(timeout=1.0)
        return self._process.exitcode
