"""Group commit: one writer thread per process applies queued matches in shared transactions.

Every ``POST /v1/matches`` puts its validated match on a queue and awaits its own outcome. The writer
takes everything queued (up to ``max_batch``) and applies it in one transaction on its own held
connection (a :class:`WriterSession`), so the commit (and on SQLite the fsync) is paid once per
batch instead of once per match. A request is answered only after its batch committed: nothing
acknowledged can be lost.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading

from ..errors import UnavailableError
from .faults import storage_fault
from .games.store import pending_game_error, pending_games
from .ledger import ApplyOutcome, Ledger, WriterSession
from .observability.metrics import WRITE_QUEUE, record_batch
from .payload import Submission

__all__ = ["GroupWriter"]

_Item = tuple[Submission, "concurrent.futures.Future[ApplyOutcome]"]


class GroupWriter:
    """Background threads that apply queued submissions in batches, each batch in arrival order.

    With ``threads > 1`` (useful on PostgreSQL only, where row locks let independent batches commit
    concurrently) batches overlap; the database's locks still order matches that share a player,
    exactly as with several API processes.
    """

    def __init__(
        self,
        ledger: Ledger,
        max_batch: int = 512,
        threads: int = 1,
        *,
        max_queue: int = 10_000,
        timeout: float | None = None,
    ) -> None:
        """Writers for ``ledger``: at most ``max_queue`` submissions wait, each at most ``timeout`` s."""
        self.ledger = ledger
        self.max_batch = max_batch
        self.max_queue = max_queue
        self.timeout = timeout
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._run, name=f"sedma-elo-writer-{i}", daemon=True)
            for i in range(threads)
        ]
        self.batches = 0
        self.applied = 0

    def start(self) -> None:
        """Start the writer threads."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Finish what is queued, then stop the threads."""
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()

    def submit_nowait(self, sub: Submission) -> concurrent.futures.Future[ApplyOutcome]:
        """Queue ``sub``; the future resolves once its batch has committed.

        Raises:
            UnavailableError: ``max_queue`` submissions are already waiting.
        """
        if self._queue.qsize() >= self.max_queue:
            raise UnavailableError(
                f"the write queue is full ({self.max_queue} matches waiting); retry shortly",
                retry_after=1.0,
            )
        fut: concurrent.futures.Future[ApplyOutcome] = concurrent.futures.Future()
        WRITE_QUEUE.inc()  # before the put: the writer may take the item at once
        self._queue.put((sub, fut))
        return fut

    async def submit(self, sub: Submission) -> ApplyOutcome:
        """Queue ``sub`` and wait for its outcome without blocking the event loop.

        Raises:
            UnavailableError: the queue is full, or no outcome came within ``timeout`` seconds (a
                submission still queued then is withdrawn; one being applied may still commit).
        """
        fut = self.submit_nowait(sub)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), self.timeout)
        except TimeoutError:
            raise UnavailableError(
                f"the write took longer than {self.timeout} s; repeat the same body to learn its outcome",
                retry_after=1.0,
            ) from None

    def _refuse_pending_games(self, batch: list[_Item]) -> list[_Item]:
        """Answer 409 to matches posted under the id of a game still being analysed; the rest go on.

        One read per batch. (A game posted between this read and the batch's commit is still
        caught later: its worker then fails it with the ledger's conflict.)
        """
        held = pending_games(self.ledger.db, [sub.match_id for sub, _ in batch])
        if not held:
            return batch
        for sub, fut in batch:
            if sub.match_id in held:
                fut.set_result(ApplyOutcome("error", error=pending_game_error(sub.match_id)))
        return [(sub, fut) for sub, fut in batch if sub.match_id not in held]

    def _run(self) -> None:
        with self.ledger.writer_session() as session:
            self._serve(session)

    def _serve(self, session: WriterSession) -> None:
        stopping = False
        while not stopping:
            item = self._queue.get()
            if item is None:
                break
            batch = [item]
            while len(batch) < self.max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stopping = True  # this thread's stop token; the batch in hand is still applied
                    break
                batch.append(nxt)
            WRITE_QUEUE.dec(len(batch))
            # A future cancelled while queued is dropped unapplied; the others can no longer be
            # cancelled, so setting their outcome below cannot fail (and kill this thread).
            batch = [(sub, fut) for sub, fut in batch if fut.set_running_or_notify_cancel()]
            if not batch:
                continue
            try:
                batch = self._refuse_pending_games(batch)
                outcomes = session.apply([sub for sub, _ in batch])
            except BaseException as exc:  # the writer carries on
                # A full disk or a lost database: 503 for each request, one log line per kind.
                fault = storage_fault(exc) if isinstance(exc, Exception) else None
                for _, fut in batch:
                    fut.set_exception(fault or exc)
                continue
            self.batches += 1
            self.applied += len(batch)
            record_batch(len(batch), sum(o.status == "created" for o in outcomes))
            for (_, fut), outcome in zip(batch, outcomes, strict=True):
                fut.set_result(outcome)
