"""The writer process's body: apply the matches its API processes send, batch by batch.

:func:`serve_writer` runs in a process started by :mod:`.writer_process`, either for one API
process (its pipe is the only client) or, under ``serve --workers N``, for all of them: then it
listens on a Unix socket and each API process connects as a client.

One thread: it waits for whichever clients have sent something, drains them into one backlog,
applies the backlog's first ``max_batch`` submissions in one transaction, and answers each client
its part of the batch in one message (a second thread to read the pipes would only contend for
this process's GIL). The messages (pickled):

* client -> writer: a list of ``(token, Submission)``, or ``(token, None)`` to withdraw the
  submission ``token`` if it is still in the backlog (its request timed out; no answer follows);
  ``None`` when the client stops (it is answered what it sent before, then its connection is
  closed);
* writer -> client: a :class:`Reply` per batch: a list of ``(token, ApplyOutcome or exception)``,
  and for one client of the batch (the first answered) the batch's size and new matches and the
  database driver's errors met since the last such reply, for that client's ``/metrics`` (so that
  API processes sharing the writer count each batch and error once);
* writer -> ``control`` (whoever started the process): ``"ready"`` once the database is open. A
  shared writer stops when ``control`` sends ``None`` or closes; one serving a single client
  (``control`` itself) stops when that client does.
"""

from __future__ import annotations

import collections
import contextlib
import os
import pickle
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, Listener, wait
from typing import NamedTuple

from ..errors import UnavailableError
from .ledger import Ledger, WriterSession
from .observability.metrics import MULTIPROC_ENV
from .payload import Submission
from .writer import Result, apply_batch, batch_facts

__all__ = ["READY", "Reply", "WriterConfig", "serve_writer"]

#: What the writer process sends ``control`` once its database is open.
READY = "ready"


class Reply(NamedTuple):
    """What the writer process answers a client for one batch (see the module docstring)."""

    #: ``(token, outcome or exception)`` of each of the client's submissions in the batch.
    results: list[tuple[int, Result]]
    #: ``(submissions, new matches)`` of the whole batch if it committed; ``None`` if it failed, or
    #: for every client but the one that counts it.
    batch: tuple[int, int] | None
    #: Errors the database driver raised in the writer process since the last counted reply.
    driver_errors: int


@dataclass(frozen=True, slots=True)
class WriterConfig:
    """What the writer process needs: the database and the group writer's settings."""

    database_url: str
    max_batch: int = 512
    #: Connections of the writer process's engine, without overflow (its session holds one).
    pool_size: int = 2
    #: SQLite: the writers' ``wal_autocheckpoint`` (pages), or None for SQLite's own.
    wal_bound: int | None = None
    #: The CPUs the process runs on (Linux), or None for those it inherits.
    cpus: frozenset[int] | None = None


def serve_writer(
    control: Connection, config: WriterConfig, address: str | None = None, authkey: bytes | None = None
) -> None:
    """Apply what the clients send until told to stop (see the module docstring).

    ``address`` (a Unix socket path) and ``authkey``: listen there for clients (a shared writer);
    without them ``control`` is the one client.
    """
    # The API processes count this process's batches from its answers; with prometheus-client's
    # multiprocess mode on, this process would add its own files to the sums.
    os.environ.pop(MULTIPROC_ENV, None)
    if config.cpus is not None:  # first: the threads started later run on the same CPUs
        os.sched_setaffinity(0, config.cpus)
    # Ctrl-C or a supervisor's SIGTERM reach the whole process group: this process stops when
    # told or when ``control`` is gone, after answering what it was handed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from ..storage import open_database

    db = open_database(
        config.database_url, pool_size=config.pool_size, max_overflow=0, wal_bound=config.wal_bound
    )
    loop = _Loop(control, config.max_batch, shared=address is not None)
    accepting = None if address is None else _Acceptor(address, authkey, loop.add)
    try:
        with Ledger(db).writer_session() as session:
            control.send_bytes(pickle.dumps(READY))
            loop.run(session)
    finally:
        if accepting is not None:
            accepting.close()
        loop.close()
        db.dispose()


class _Loop:
    """The clients, the backlog and the batches of :func:`serve_writer`."""

    def __init__(self, control: Connection, max_batch: int, *, shared: bool) -> None:
        self.control = control
        self.max_batch = max_batch
        self.shared = shared
        self.clients: list[Connection] = [] if shared else [control]
        self.closing: list[Connection] = []  # clients that stopped: closed once answered
        self.backlog: collections.deque[tuple[Connection, int, Submission]] = collections.deque()
        self.stopping = False
        self._new: list[Connection] = []  # accepted by the acceptor's thread, not yet served
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()

    def add(self, client: Connection) -> None:
        """A client accepted on another thread: served from the next wait on."""
        with self._lock:
            self._new.append(client)
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def run(self, session: WriterSession) -> None:
        """Serve until told to stop and every submission in hand is answered."""
        while self.backlog or not self.stopping:
            watched: list[Connection | socket.socket] = [*self.clients, self._wake_r]
            if self.shared:
                watched.append(self.control)
            # Block only with nothing in hand.
            for ready in wait(watched, timeout=0 if self.backlog else None):
                self._take(ready)
            if self.backlog:
                self._apply_next(session)
            self._close_answered()

    def _take(self, ready: object) -> None:
        """Read what ``ready`` (a client, ``control`` or the wake-up socket) has for the loop."""
        if ready is self._wake_r:
            self._wake_r.recv(4096)
            with self._lock:
                self.clients.extend(self._new)
                self._new.clear()
            return
        if self.shared and ready is self.control:
            self.stopping = True  # serve says stop (None), or is gone
            with contextlib.suppress(EOFError, OSError):
                self.control.recv_bytes()
            return
        assert isinstance(ready, Connection)
        while True:  # everything this client has sent so far
            try:
                message: list[tuple[int, Submission | None]] | None = pickle.loads(ready.recv_bytes())
            except (EOFError, OSError):
                message = None
            if message is None:
                self.clients.remove(ready)
                self.closing.append(ready)
                if not self.shared:
                    self.stopping = True
                return
            for token, sub in message:
                if sub is None:
                    self._withdraw(ready, token)
                else:
                    self.backlog.append((ready, token, sub))
            if not ready.poll(0):
                return

    def _withdraw(self, client: Connection, token: int) -> None:
        """Drop the submission ``token`` of ``client`` if it still waits (its request timed out)."""
        for i, (owner, mine, _) in enumerate(self.backlog):
            if mine == token and owner is client:
                del self.backlog[i]
                return

    def _apply_next(self, session: WriterSession) -> None:
        batch = [self.backlog.popleft() for _ in range(min(self.max_batch, len(self.backlog)))]
        results = apply_batch(session, [sub for _, _, sub in batch])
        replies: dict[Connection, list[tuple[int, Result]]] = {}
        for (client, token, _), result in zip(batch, results, strict=True):
            replies.setdefault(client, []).append((token, result))
        facts, errors = batch_facts(results), session.take_errors()
        for client, answers in replies.items():
            with contextlib.suppress(OSError):  # that API process is gone: nobody waits
                client.send_bytes(_dumps(Reply(answers, facts, errors)))
            facts, errors = None, 0  # counted by the first client only

    def _close_answered(self) -> None:
        if not self.closing:
            return
        waiting = {client for client, _, _ in self.backlog}
        for client in [c for c in self.closing if c not in waiting]:
            self.closing.remove(client)
            client.close()

    def close(self) -> None:
        """Close every client's connection and the wake-up sockets."""
        for client in [*self.clients, *self.closing, self.control]:
            with contextlib.suppress(OSError):
                client.close()
        self._wake_r.close()
        self._wake_w.close()


class _Acceptor:
    """Accepts clients on ``address`` on a thread of its own and hands each to ``add``."""

    def __init__(self, address: str, authkey: bytes | None, add: Callable[[Connection], None]) -> None:
        with contextlib.suppress(FileNotFoundError):  # a writer process before this one died
            os.unlink(address)
        self.listener = Listener(address, "AF_UNIX", authkey=authkey)
        self.add = add
        self.thread = threading.Thread(target=self._run, name="sedma-elo-writer-accept", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                client = self.listener.accept()
            except OSError:  # closed: the writer stops
                return
            except Exception:  # a client that failed the handshake (authkey): refused, go on
                continue
            self.add(client)

    def close(self) -> None:
        """Stop accepting."""
        with contextlib.suppress(OSError):
            self.listener.close()


def _dumps(reply: Reply) -> bytes:
    """``reply`` pickled; an exception that does not pickle travels as a 503 saying what it was."""
    try:
        return pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
    except Exception:  # an unexpected error object (a driver's) that cannot cross the pipe
        safe: list[tuple[int, Result]] = []
        for token, result in reply.results:
            try:
                pickle.dumps(result)
            except Exception:
                why = f"the writer failed: {type(result).__name__}: {result}"
                result = UnavailableError(why, retry_after=1.0)
            safe.append((token, result))
        return pickle.dumps(reply._replace(results=safe), pickle.HIGHEST_PROTOCOL)
