"""The group writer in a process of its own, fed by the API process over a pipe.

Why a process: a match write costs the API process's event loop about 200 µs of CPU (HTTP, the
key, validation) and the writer about as much again (the fold, SQL, the answer text). On threads
of one process both hold one GIL, so a write-heavy service tops out at one core however many the
machine has, and the writer's database calls wait for the GIL the event loop holds. A writer
process has a GIL of its own (docs/service-measurements.md, "The writer process", has the figures).

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

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import pickle
import shutil
import tempfile
import threading
import time
from multiprocessing.connection import Client, Connection

from ..errors import UnavailableError
from .ledger import Ledger
from .observability.metrics import DATABASE_ERRORS, WRITE_QUEUE, WRITER_RESTARTS, record_batch
from .payload import Submission
from .writer import LoopWaiter, Result, Submitter, Waiter, answer
from .writer_main import READY, Reply, WriterConfig, serve_writer

__all__ = ["ProcessWriter", "SharedWriter", "WriterConfig"]

_LOG = logging.getLogger("sedma_elo.service.writer")
#: Seconds between two attempts to reach a shared writer process that is starting again.
RECONNECT_SECONDS = 0.2
#: Seconds a new writer process may take to import, open and migrate the database.
START_TIMEOUT = 120.0


class ProcessWriter(Submitter):
    """A :class:`Submitter` whose batches are applied by a writer process (see the module docstring).

    ``ledger`` is the API process's own: its :meth:`note_change` is called for every batch answered.
    """

    def __init__(
        self,
        config: WriterConfig,
        ledger: Ledger,
        *,
        max_queue: int = 10_000,
        timeout: float | None = None,
        shared: tuple[str, bytes] | None = None,
    ) -> None:
        """A writer process for ``config``: at most ``max_queue`` submissions wait, each ``timeout`` s.

        ``shared``: the address and key of a :class:`SharedWriter` to connect to, instead of a
        writer process of this one's own.
        """
        super().__init__(max_queue=max_queue, timeout=timeout)
        self.config = config
        self.shared = shared
        self.ledger = ledger
        self._pending: dict[int, Waiter] = {}
        self._tokens = itertools.count()
        self._send_lock = threading.Lock()
        self._outgoing: list[tuple[int, Submission | None]] = []
        self._conn: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None  # None: shared
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
        self._conn, self._process = self._connect() if self.shared else self._spawn()
        self._receiver = threading.Thread(target=self._receive, name="sedma-elo-writer-answers", daemon=True)
        self._receiver.start()

    def _spawn(self) -> tuple[Connection, multiprocessing.process.BaseProcess | None]:
        return spawn_writer(self.config)

    def _connect(self) -> tuple[Connection, multiprocessing.process.BaseProcess | None]:
        """A connection to the shared writer process, tried until it answers or ``START_TIMEOUT``.

        Raises:
            UnavailableError: no shared writer process answered.
        """
        assert self.shared is not None
        address, authkey = self.shared
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                return Client(address, "AF_UNIX", authkey=authkey), None
            except (OSError, EOFError) as exc:
                if self._stopping or time.monotonic() > deadline:
                    raise UnavailableError(
                        "the shared writer process does not answer", retry_after=5.0
                    ) from exc
                time.sleep(RECONNECT_SECONDS)

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

    def ready(self) -> bool:
        """Whether a writer process is connected (not stopping, not being started again)."""
        return self._conn is not None and not self._stopping

    def waiting(self) -> int:
        """How many submissions wait for the writer process's answer."""
        return len(self._pending)

    def _enqueue(self, sub: Submission, waiter: Waiter) -> None:
        token = next(self._tokens)
        self._pending[token] = waiter
        if not isinstance(waiter, LoopWaiter):
            self._send([(token, sub)])
            return
        waiter.token = token
        self._send_soon(waiter.loop, (token, sub))

    def _withdraw(self, waiter: LoopWaiter) -> None:
        """Tell the writer process to drop the submission of ``waiter`` if it has not taken it into
        a batch (its answer, if one still comes, finds no waiter)."""
        if self._pending.pop(waiter.token, None) is None:
            return
        WRITE_QUEUE.dec()
        self._send_soon(waiter.loop, (waiter.token, None))

    def _send_soon(self, loop: asyncio.AbstractEventLoop, item: tuple[int, Submission | None]) -> None:
        """Send ``item`` at the end of this turn of ``loop``.

        What one turn of the event loop hands over goes in one message: one pickle and one write
        for all of it, and one wake-up of the writer process.
        """
        with self._send_lock:
            self._outgoing.append(item)
            first = len(self._outgoing) == 1
        if first:
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        with self._send_lock:
            items, self._outgoing = self._outgoing, []
        self._send(items)

    def _send(self, items: list[tuple[int, Submission | None]]) -> None:
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
                reply: Reply = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                if self._stopping:
                    self._fail_pending("the service is stopping")
                    return
                self._restart()
                continue
            self._settle(reply)

    def _settle(self, reply: Reply) -> None:
        self.ledger.note_change()  # before anyone is answered: the read cache's freshness
        waiters: list[Waiter] = []
        results: list[Result] = []
        for token, result in reply.results:
            waiter = self._pending.pop(token, None)
            if waiter is not None:
                waiters.append(waiter)
                results.append(result)
        WRITE_QUEUE.dec(len(waiters))  # the others were counted out when they were failed
        DATABASE_ERRORS.inc(reply.driver_errors)
        if reply.batch is not None:  # the whole batch's figures, sent to one client of the batch
            record_batch(*reply.batch)
            self.batches += 1
            self.applied += reply.batch[0]
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
        if self.shared:
            _LOG.error("the shared writer process is gone; connecting again")
        else:
            _LOG.error("the writer process stopped (exit code %s); starting another", self._exitcode())
        while not self._stopping:
            try:
                # Not under the lock: the event loop would wait.
                conn, process = self._connect() if self.shared else self._spawn()
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


def spawn_writer(
    config: WriterConfig, address: str | None = None, authkey: bytes | None = None
) -> tuple[Connection, multiprocessing.process.BaseProcess]:
    """A writer process for ``config``, started and ready: the ``control`` connection and the process.

    Raises:
        UnavailableError: the writer process did not start within :data:`START_TIMEOUT` s.
    """
    # spawn, not fork: the API process has threads (pools, the event loop) that fork would copy
    # in whatever state they were in.
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(
        target=serve_writer, args=(theirs, config, address, authkey), name="sedma-elo-writer", daemon=True
    )
    process.start()
    theirs.close()
    if not ours.poll(START_TIMEOUT) or pickle.loads(ours.recv_bytes()) != READY:
        process.kill()
        raise UnavailableError("the writer process did not start", retry_after=5.0)
    return ours, process


class SharedWriter:
    """One writer process for all of ``serve --workers N``'s API processes, on a Unix socket.

    The socket lies in a directory of its own that only this user can enter, and a client must
    know :attr:`authkey` too; :meth:`environment` is how the API processes learn both. A writer
    process that dies is started again on the same socket (the API processes connect again).
    """

    def __init__(self, config: WriterConfig) -> None:
        self.config = config
        self._dir = tempfile.mkdtemp(prefix="sedma-elo-writer-")  # mode 0700
        self.address = os.path.join(self._dir, "writer.sock")
        self.authkey = os.urandom(32)
        self._control: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        self._stopping = threading.Event()
        self._watch: threading.Thread | None = None
        self.restarts = 0

    def environment(self) -> dict[str, str]:
        """The settings that point an API process at this writer (``WRITER_ADDRESS``, ``WRITER_AUTHKEY``)."""
        return {"SEDMA_ELO_WRITER_ADDRESS": self.address, "SEDMA_ELO_WRITER_AUTHKEY": self.authkey.hex()}

    def start(self) -> None:
        """Start the writer process and a thread that starts it again if it dies.

        Raises:
            UnavailableError: it did not start within :data:`START_TIMEOUT` s.
        """
        self._control, self._process = spawn_writer(self.config, self.address, self.authkey)
        self._watch = threading.Thread(target=self._watch_process, name="sedma-elo-writer-watch", daemon=True)
        self._watch.start()

    def _watch_process(self) -> None:
        while not self._stopping.is_set():
            process = self._process
            assert process is not None
            process.join()
            if self._stopping.is_set():
                return
            _LOG.error("the shared writer process stopped (exit code %s); starting another", process.exitcode)
            self.restarts += 1
            if self._control is not None:
                self._control.close()  # the dead process's end
            try:
                self._control, self._process = spawn_writer(self.config, self.address, self.authkey)
            except UnavailableError:
                _LOG.error("the shared writer process did not start; trying again")

    def stop(self) -> None:
        """Let the writer process answer what it holds, then stop it; remove its socket."""
        self._stopping.set()
        if self._control is not None:
            with contextlib.suppress(OSError):
                self._control.send_bytes(pickle.dumps(None))
        if self._process is not None:
            self._process.join(timeout=30)
            if self._process.is_alive():
                self._process.kill()
        shutil.rmtree(self._dir, ignore_errors=True)
