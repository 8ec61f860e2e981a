"""Game analysis on PostgreSQL through procrastinate: one job per posted game.

On PostgreSQL a posted game is a row of ``games`` (its record, status and analysis, what
``GET /v1/games/{id}`` shows) plus a procrastinate job that names it. :func:`defer_in` defers the
job on the connection of the transaction that stores the row (procrastinate's
``configure(connection=...)``), so a game is stored with its job or not at all. A worker
(:func:`run_queue_worker`: ``sedma-elo worker`` or a worker of ``serve``) runs
:func:`analyse_game` for each job: it marks the game ``analysing`` (counting an attempt), analyses
it and applies the match through the ledger's exactly-once path (:class:`~.worker.GameWorker`).

A worker killed outright stops sending procrastinate's heartbeat; every worker looks for jobs of
workers silent for ``lease`` seconds (:func:`retry_stalled`) and puts them back, so another worker
analyses the game again; the ledger answers the match it may already hold as a repeat. The job's
``lock`` is the ``match_id``: two workers never analyse one game at once.

On SQLite the ``games`` table itself stays the job table (:class:`~.store.GameStore` claims).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

from procrastinate import App, PsycopgConnector, RetryStrategy
from sqlalchemy import Connection

from ...storage import libpq_url
from ..settings import GAME_WORKER_POOLS

__all__ = ["QUEUE", "TASK_NAME", "defer_in", "drain_queue", "queue_app", "retry_stalled", "run_queue_worker"]

_log = logging.getLogger("sedma_elo.service.games")

#: The procrastinate queue and task of game analyses (frozen in migration 0006_queue too).
QUEUE = "games"
TASK_NAME = "sedma_elo.analyse_game"


def queue_app(url: str | None = None) -> App:
    """The procrastinate app of game analyses; on ``url`` (a pool of ``GAME_WORKER_POOLS.queue``) to run jobs.

    Without ``url`` the app only defers jobs on a given connection (:func:`defer_in`).
    """
    connector = (
        PsycopgConnector(conninfo=libpq_url(url), min_size=1, max_size=GAME_WORKER_POOLS.queue)
        if url is not None
        else PsycopgConnector()
    )
    app = App(connector=connector)
    app.task(
        name=TASK_NAME,
        queue=QUEUE,
        # An attempt that ended in an error the worker could not classify (the database went away
        # mid-job): tried again after a while; the game's own attempt count decides when it fails.
        retry=RetryStrategy(max_attempts=10, exponential_wait=2),
    )(analyse_game)
    return app


def defer_in(conn: Connection, match_id: str) -> None:
    """Defer the analysis of game ``match_id`` inside ``conn``'s transaction (committed with it)."""
    raw = conn.connection.driver_connection  # the psycopg connection, in the same transaction
    _DEFERRER.configure_task(name=TASK_NAME, queue=QUEUE, lock=match_id, connection=raw).defer(
        match_id=match_id
    )


class Retry(Exception):
    """The game goes back to waiting (its job is retried by procrastinate's retry strategy)."""


#: The worker of this process (set by :func:`run_queue_worker` / :func:`drain_queue`).
_current: dict[str, Any] = {}


def analyse_game(match_id: str) -> None:
    """The job: analyse game ``match_id`` and apply its match, once (see the module docstring).

    Raises:
        Retry: the analysis or the ledger failed in a way worth another attempt.
    """
    from .worker import GameWorker

    worker: GameWorker = _current["worker"]
    claim = worker.store.take(match_id, worker.lease)
    if claim is None:  # already applied or failed (a job retried after its worker finished it)
        return
    _current["taken"] += 1
    with worker.ledger.writer_session() as session:
        step = worker.process(claim, session)
    if step == "retry":
        raise Retry(f"game {match_id!r} is tried again")


#: The app that defers jobs on a given connection (it opens no pool of its own).
_DEFERRER = queue_app()


async def retry_stalled(app: App, lease: float) -> int:
    """Put back the jobs of workers without a heartbeat for ``lease`` seconds; how many were."""
    jobs = await app.job_manager.get_stalled_jobs(
        queue=QUEUE, task_name=TASK_NAME, seconds_since_heartbeat=lease
    )
    count = 0
    for job in jobs:
        _log.warning("game worker: game %s was left by a silent worker; it is taken again", job.task_kwargs)
        await app.job_manager.retry_job(job)
        count += 1
    return count


async def _watch_stalled(app: App, lease: float, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await retry_stalled(app, lease)
        except Exception as exc:  # the database is unreachable: the worker's own loop says so too
            _log.warning("game worker: stalled jobs: %s", _summary(exc))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), lease / 2)


def _summary(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]


def _options(lease: float, poll: float) -> dict[str, Any]:
    return {
        "queues": [QUEUE],
        "concurrency": 1,
        "fetch_job_polling_interval": poll,
        "update_heartbeat_interval": lease / 4,
        "stalled_worker_timeout": lease,
        "install_signal_handlers": False,
    }


@contextlib.contextmanager
def _installed(worker: Any) -> Iterator[None]:
    _current.update(worker=worker, taken=0)
    try:
        yield
    finally:
        _current.clear()


def run_queue_worker(worker: Any, url: str, stop: threading.Event, poll: float) -> None:
    """Run procrastinate jobs of game analyses with ``worker`` until ``stop`` is set.

    The job in hand is finished first (procrastinate's graceful stop). A database error (the
    server cannot be reached, or is lost) is logged and the worker started again after
    ``max(poll, 1)`` seconds, as the SQLite loop of :meth:`GameWorker.run` does.
    """

    async def serve_once(done: asyncio.Event) -> None:
        app = queue_app(url)
        ended = asyncio.Event()
        async with app.open_async():
            await retry_stalled(app, worker.lease)
            running = asyncio.create_task(app.run_worker_async(**_options(worker.lease, poll)))
            watching = asyncio.create_task(_watch_stalled(app, worker.lease, ended))
            stopping = asyncio.create_task(done.wait())
            await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not running.done():
                running.cancel()  # procrastinate stops gracefully: the job in hand ends first
            ended.set()
            stopping.cancel()
            await asyncio.gather(running, watching, stopping, return_exceptions=True)
            error = None if running.cancelled() else running.exception()
            if error is not None:
                raise error

    async def main() -> None:
        done = asyncio.Event()
        loop = asyncio.get_running_loop()
        threading.Thread(
            target=lambda: (stop.wait(), loop.call_soon_threadsafe(done.set)), daemon=True
        ).start()
        while not done.is_set():
            try:
                await serve_once(done)
            except Exception as exc:  # the database is unreachable: wait, then start again
                _log.warning("game worker: %s", _summary(exc))
            if not done.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), max(poll, 1.0))

    with _installed(worker):
        asyncio.run(main())


def drain_queue(worker: Any, url: str) -> int:
    """Run every waiting game analysis job with ``worker`` (in this thread); returns how many ran."""

    async def main() -> int:
        app = queue_app(url)
        async with app.open_async():
            await app.run_worker_async(wait=False, listen_notify=False, **_options(worker.lease, 0.05))
        return int(_current["taken"])

    with _installed(worker):
        return asyncio.run(main())
