"""Analysis workers: claim a game, analyse its record, apply the match through the ledger.

A worker holds one database connection for the ledger (a :class:`WriterSession`, as the API's
writer does) and loops: :meth:`GameStore.claim` a job, :func:`~sedma_elo.game.analysis.analyze`
the record (renewing the lease after each round), apply the match built from the analysis through
the same exactly-once path as ``POST /v1/matches``, then mark the game ``applied`` (or ``failed``
with the ledger's reason). A worker killed at any point loses nothing: its lease runs out and the
next worker analyses the game again (the analysis is deterministic, so the match body is the
same) and the ledger answers a match it already holds as a repeat.

``sedma-elo serve`` starts :func:`start_processes`; ``sedma-elo worker`` runs :func:`run_worker`.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Literal

from ...game.analysis import AnalysisConfig, analyze
from ...game.record import parse_record
from ...storage import Database, open_database
from ..leases import retry_delay
from ..ledger import Ledger, WriterSession
from ..settings import GAME_WORKER_POOLS
from .payload import match_submission
from .store import Claim, GameStore

__all__ = [
    "DEFAULT_LEASE",
    "MAX_ATTEMPTS",
    "GameWorker",
    "WorkerProcesses",
    "run_worker",
    "start_processes",
    "stop_processes",
]

_log = logging.getLogger("sedma_elo.service.games")

#: Seconds a claim holds a game without a renewal (renewed after every analysed round).
DEFAULT_LEASE = 60.0
#: Claims of one game that ended in an unexpected error before it is marked failed.
MAX_ATTEMPTS = 3

Step = Literal["applied", "failed", "retry", "idle"]


class GameWorker:
    """Analyses and applies queued games of one database; one per thread or process."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        lease: float = DEFAULT_LEASE,
        config: AnalysisConfig | None = None,
        on_claim: Callable[[Claim], None] | None = None,
    ) -> None:
        """A worker on ``ledger``'s database; ``on_claim`` is called once a job is held (tests)."""
        self.ledger = ledger
        self.store = GameStore(ledger.db)
        self.lease = lease
        self.config = config or AnalysisConfig()
        self.on_claim = on_claim

    def step(self, session: WriterSession) -> Step:
        """Claim and finish one job of the in-table queue (SQLite); ``idle`` when none is waiting.

        Raises:
            what the database driver raises when the database is unreachable (the claim's lease
            then runs out and the game is taken again).
        """
        claim = self.store.claim(self.lease)
        if claim is None:
            return "idle"
        return self.process(claim, session)

    def process(self, claim: Claim, session: WriterSession) -> Step:
        """Analyse the game of ``claim``, apply its match through ``session`` and end the claim.

        Raises:
            what the database driver raises when the database is unreachable.
        """
        if self.on_claim is not None:
            self.on_claim(claim)
        try:
            record = parse_record(json.loads(claim.body)["record"])
            renewed = time.monotonic()

            def keep_lease(_done: int, _total: int) -> None:
                nonlocal renewed
                if time.monotonic() - renewed > self.lease / 3:
                    self.store.renew(claim, self.lease)
                    renewed = time.monotonic()

            analysis = analyze(record, self.config, progress=keep_lease)
            submission = match_submission(claim.match_id, claim.played_at, analysis)
        except Exception as exc:  # a record the checks let through but the analysis refuses: a bug
            _log.exception("analysis of game %s failed", claim.match_id)
            return self._retry_or_fail(claim, f"analysis failed: {exc}")
        outcome = session.apply([submission])[0]
        details = analysis.to_dict()
        if outcome.status in ("created", "repeat"):
            self.store.finish(claim, "applied", analysis=details)
            return "applied"
        if outcome.error is not None:  # the ledger refused the match (a conflict, a rating refused)
            self.store.finish(claim, "failed", analysis=details, reason=str(outcome.error))
            return "failed"
        return self._retry_or_fail(claim, f"the ledger failed to apply the match: {outcome.failure}")

    def _retry_or_fail(self, claim: Claim, reason: str) -> Step:
        if claim.attempt >= MAX_ATTEMPTS:
            self.store.finish(claim, "failed", reason=f"{reason} (after {claim.attempt} attempts)")
            return "failed"
        self.store.finish(claim, "queued", reason=reason)
        return "retry"

    @property
    def queued_by_procrastinate(self) -> bool:
        """Whether this database's jobs are procrastinate jobs (PostgreSQL) rather than claims (SQLite)."""
        return self.ledger.db.dialect == "postgresql"

    def drain(self) -> int:
        """Finish every waiting job (in this thread); returns how many were taken."""
        if self.queued_by_procrastinate:
            from .queue import drain_queue

            return drain_queue(self, self.ledger.db.url)
        taken = 0
        with self.ledger.writer_session() as session:
            while self.step(session) != "idle":
                taken += 1
        return taken

    def run(self, stop: threading.Event, poll: float = 0.5) -> None:
        """Work until ``stop`` is set, polling for jobs every ``poll`` seconds when idle.

        A database error is logged and retried after ``poll`` seconds; the job in hand is finished
        before ``stop`` is seen. On PostgreSQL this runs a procrastinate worker (:mod:`.queue`).
        """
        if self.queued_by_procrastinate:
            from .queue import run_queue_worker

            run_queue_worker(self, self.ledger.db.url, stop, poll)
            return
        with self.ledger.writer_session() as session:
            while not stop.is_set():
                try:
                    busy = self.step(session) != "idle"
                except Exception as exc:  # the database is unreachable: wait, then try again
                    _log.warning("game worker: %s", (str(exc) or type(exc).__name__).splitlines()[0])
                    busy = False
                if not busy:
                    stop.wait(poll)


def run_worker(url: str, lease: float = DEFAULT_LEASE, poll: float = 0.5, parent: int | None = None) -> None:
    """Run a worker on the database at ``url`` until SIGTERM or SIGINT (the job in hand is finished).

    With ``parent`` (a process id) the worker also stops when that process is gone (``serve``
    was killed outright), instead of working on as an orphan.

    Raises:
        ValidationError, DatabaseError: the URL is unusable or the database does not exist.
    """
    from ...storage.database import open_checked

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if parent is not None:
        threading.Thread(target=_watch_parent, args=(parent, stop), daemon=True).start()
    db: Database = open_checked(url, create=False)  # checks the URL and migrates
    if db.dialect == "postgresql":  # reopened with the pools the connection budget counts
        db.dispose()
        sizes = GAME_WORKER_POOLS
        db = open_database(
            url, pool_size=sizes.engine, max_overflow=0, fast_pool_size=sizes.fast, migrate=False
        )
    try:
        ledger = Ledger(db, async_connections=GAME_WORKER_POOLS.async_reader)
        ledger.ensure_version()
        GameWorker(ledger, lease=lease).run(stop, poll)
    finally:
        db.dispose()


def _watch_parent(parent: int, stop: threading.Event) -> None:
    while not stop.wait(1.0):
        if os.getppid() != parent:
            stop.set()


# The child's first lines, before anything heavy is imported: on Linux the kernel kills it the moment
# its parent dies (``serve`` killed outright must not leave workers holding its pipes and its
# database); its game, if any, is taken again once the lease runs out. Then it checks that the
# parent did not die before that, and runs.
_BOOTSTRAP = """
import os, signal, sys
if sys.platform == "linux":
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
parent = int(sys.argv[1])
if os.getppid() != parent:
    sys.exit(0)
from sedma_elo.service.games.worker import run_worker
run_worker(os.environ["SEDMA_ELO_DATABASE_URL"], float(sys.argv[2]), 0.5, parent)
"""


class WorkerProcesses:
    """Game worker processes of ``serve``, each restarted when it dies (after a bounded back-off).

    A supervisor thread looks at each process every ``check`` seconds. One that exited while the
    pool was not stopping is logged (its exit code or signal) and started again after
    ``min(backoff_max, backoff_base * 2 ** (n - 1))`` seconds, ``n`` counting its exits in a row;
    the count starts again once a process has run ``steady`` seconds. Its game, if it held one, is
    taken again once the lease runs out.
    """

    def __init__(
        self,
        url: str,
        count: int,
        lease: float = DEFAULT_LEASE,
        *,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        steady: float = 60.0,
        check: float = 0.2,
    ) -> None:
        """``count`` workers on ``url`` (started by :meth:`start`)."""
        self.url, self.count, self.lease = url, count, lease
        self.backoff_base, self.backoff_max, self.steady, self.check = (
            backoff_base,
            backoff_max,
            steady,
            check,
        )
        self.procs: list[subprocess.Popen[bytes]] = []
        self.restarts = 0
        self._started: list[float] = []
        self._failures: list[int] = []
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def _spawn(self) -> subprocess.Popen[bytes]:
        # The URL goes through the environment, not the command line, so a password stays out of ``ps``.
        env = {**os.environ, "SEDMA_ELO_DATABASE_URL": self.url}
        # A session of its own: a Ctrl-C at the terminal (SIGINT to the foreground group) reaches
        # ``serve`` alone, which then stops its workers through :meth:`stop`, so a shutdown is not
        # taken for deaths. PR_SET_PDEATHSIG (in ``_BOOTSTRAP``) still ends a worker with ``serve``.
        return subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP, str(os.getpid()), str(self.lease)],
            env=env,
            start_new_session=True,
        )

    def start(self) -> WorkerProcesses:
        """Start the processes and their supervisor; returns ``self``."""
        with self._lock:
            self.procs = [self._spawn() for _ in range(self.count)]
            self._started = [time.monotonic()] * self.count
            self._failures = [0] * self.count
        if self.count:
            self._thread = threading.Thread(target=self._supervise, name="game-workers", daemon=True)
            self._thread.start()
        return self

    def delay(self, failures: int) -> float:
        """Seconds before a process that exited ``failures`` times in a row is started again."""
        return retry_delay(failures, self.backoff_base, self.backoff_max)

    def _supervise(self) -> None:
        due: dict[int, float] = {}  # slot -> when to start it again
        while not self._stopping.wait(self.check):
            now = time.monotonic()
            with self._lock:
                for slot, proc in enumerate(self.procs):
                    if slot in due:
                        if now >= due[slot] and not self._stopping.is_set():
                            self.procs[slot] = self._spawn()
                            self._started[slot] = now
                            self.restarts += 1
                            del due[slot]
                        continue
                    code = proc.poll()
                    if code is None:
                        continue
                    ran = now - self._started[slot]
                    self._failures[slot] = 1 if ran >= self.steady else self._failures[slot] + 1
                    wait = self.delay(self._failures[slot])
                    how = f"signal {-code}" if code < 0 else f"exit code {code}"
                    # Exit code 0 is a worker that was asked to stop (SIGTERM from outside, say a
                    # service manager stopping the whole group): not a failure, but the pool is
                    # still kept at its size.
                    _log.log(
                        logging.INFO if code == 0 else logging.WARNING,
                        "game worker %d (pid %d) %s (%s) after %.1f s; restarting it in %.1f s",
                        slot,
                        proc.pid,
                        "stopped" if code == 0 else "died",
                        how,
                        ran,
                        wait,
                    )
                    due[slot] = now + wait

    def stop(self, timeout: float = 30.0) -> None:
        """Ask each worker to stop (SIGTERM: it finishes its job); kill any left after ``timeout``."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + timeout
        for proc in self.procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start_processes(url: str, count: int, lease: float = DEFAULT_LEASE) -> WorkerProcesses:
    """Start ``count`` supervised worker processes on ``url``; they are killed when this process dies."""
    return WorkerProcesses(url, count, lease).start()


def stop_processes(workers: WorkerProcesses, timeout: float = 30.0) -> None:
    """:meth:`WorkerProcesses.stop`."""
    workers.stop(timeout)
