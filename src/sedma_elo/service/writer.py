"""Group commit: a writer applies queued matches in shared transactions.

:class:`Submitter` is what the write route needs of a writer; :class:`GroupWriter` is one on
threads of this process, :class:`~sedma_elo.service.writer_process.ProcessWriter` one in a process
of its own (what ``serve`` runs); both apply a batch with :func:`apply_batch`.

Every ``POST /v1/matches`` puts its validated match on a queue and awaits its own outcome. The writer
takes everything queued (up to ``max_batch``) and applies it in one transaction on its own held
connection (a :class:`WriterSession`), so the commit (and on SQLite the fsync) is paid once per
batch instead of once per match. A request is answered only after its batch committed: nothing
acknowledged can be lost.

A request awaiting on an event loop (:meth:`GroupWriter.submit`) waits on a plain asyncio future
that the writer settles for the whole batch in one ``call_soon_threadsafe``: one wake-up of the
loop per batch instead of one per request (``asyncio.wrap_future`` of a thread's future costs a
lock, a chained callback and a wake-up each).
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Sequence

from ..errors import UnavailableError
from .faults import storage_fault
from .games.store import pending_game_error
from .ledger import ApplyOutcome, Ledger, WriterSession
from .observability.metrics import DATABASE_ERRORS, WRITE_QUEUE, record_batch
from .payload import Submission

__all__ = [
    "GroupWriter",
    "LoopWaiter",
    "Result",
    "Submitter",
    "Waiter",
    "answer",
    "apply_batch",
    "batch_facts",
    "count_batch",
]


class LoopWaiter:
    """A request's wait on an event loop: ``future`` belongs to ``loop`` and is settled there;
    ``token`` is what a :class:`~sedma_elo.service.writer_process.ProcessWriter` named it."""

    __slots__ = ("future", "loop", "token")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[ApplyOutcome] = loop.create_future()
        self.token = 0


#: What the writer hands back for one submission: its outcome, or the exception of its batch.
Result = ApplyOutcome | BaseException
#: How a submitter waits: a thread's future, or a future on an event loop.
Waiter = concurrent.futures.Future[ApplyOutcome] | LoopWaiter
_Item = tuple[Submission, Waiter]


def _settle(results: list[tuple[asyncio.Future[ApplyOutcome], Result]]) -> None:
    """Set each loop future's result (on its loop); one withdrawn meanwhile (a timeout) is skipped."""
    for future, result in results:
        if future.done():
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)


def _is_live(waiter: Waiter) -> bool:
    """Whether the submission is still wanted; a concurrent future can no longer be cancelled after."""
    if isinstance(waiter, LoopWaiter):
        return not waiter.future.done()
    return waiter.set_running_or_notify_cancel()


def answer(waiters: Sequence[Waiter], results: Sequence[Result]) -> None:
    """Hand each waiter its result: loop futures in one call per loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[ApplyOutcome], Result]]] = {}
    for waiter, result in zip(waiters, results, strict=True):
        if isinstance(waiter, LoopWaiter):
            by_loop.setdefault(waiter.loop, []).append((waiter.future, result))
        elif isinstance(result, BaseException):
            waiter.set_exception(result)
        else:
            waiter.set_result(result)
    for loop, settled in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits any more
            loop.call_soon_threadsafe(_settle, settled)


class Submitter(abc.ABC):
    """What the API's write route needs of a writer: queue a submission, await its outcome.

    :class:`GroupWriter` applies submissions on threads of this process;
    :class:`~sedma_elo.service.writer_process.ProcessWriter` hands them to a writer process.
    """

    def __init__(self, *, max_queue: int, timeout: float | None) -> None:
        self.max_queue = max_queue
        self.timeout = timeout

    @abc.abstractmethod
    def start(self) -> None:
        """Start applying submissions."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Finish what is queued, then stop."""

    def ready(self) -> bool:
        """Whether writes can be taken now (``/readyz``); a writer process starting again is not."""
        return True

    @abc.abstractmethod
    def waiting(self) -> int:
        """How many submissions wait for their outcome."""

    @abc.abstractmethod
    def _enqueue(self, sub: Submission, waiter: Waiter) -> None:
        """Hand ``sub`` on; ``waiter`` gets its outcome."""

    @abc.abstractmethod
    def _withdraw(self, waiter: LoopWaiter) -> None:
        """``waiter`` timed out (its future failed): drop its submission if it still waits."""

    def _expire(self, waiter: LoopWaiter) -> None:
        """Fail a request that waited ``timeout`` seconds (nothing if its outcome came meanwhile)."""
        if waiter.future.done():
            return
        waiter.future.set_exception(
            UnavailableError(
                f"the write took longer than {self.timeout} s; repeat the same body to learn its outcome",
                retry_after=1.0,
            )
        )
        self._withdraw(waiter)

    def _put(self, sub: Submission, waiter: Waiter) -> None:
        if self.waiting() >= self.max_queue:
            raise UnavailableError(
                f"the write queue is full ({self.max_queue} matches waiting); retry shortly",
                retry_after=1.0,
            )
        WRITE_QUEUE.inc()  # before the put: the writer may take the item at once
        self._enqueue(sub, waiter)

    def submit_nowait(self, sub: Submission) -> concurrent.futures.Future[ApplyOutcome]:
        """Queue ``sub``; the future resolves once its batch has committed.

        Raises:
            UnavailableError: ``max_queue`` submissions are already waiting.
        """
        fut: concurrent.futures.Future[ApplyOutcome] = concurrent.futures.Future()
        self._put(sub, fut)
        return fut

    async def submit(self, sub: Submission) -> ApplyOutcome:
        """Queue ``sub`` and wait for its outcome without blocking the event loop.

        Raises:
            UnavailableError: the queue is full, or no outcome came within ``timeout`` seconds (a
                submission still queued, here or in a writer process, is then withdrawn; one being
                applied may still commit).
        """
        loop = asyncio.get_running_loop()
        waiter = LoopWaiter(loop)
        self._put(sub, waiter)
        if self.timeout is None:
            return await waiter.future
        # A plain timer that fails the future (so a submission still queued is withdrawn):
        # asyncio.timeout's task bookkeeping cost about 3% of the event loop's CPU per write.
        timer = loop.call_later(self.timeout, self._expire, waiter)
        try:
            return await waiter.future
        finally:
            timer.cancel()


class GroupWriter(Submitter):
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
        super().__init__(max_queue=max_queue, timeout=timeout)
        self.ledger = ledger
        self.max_batch = max_batch
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

    def waiting(self) -> int:
        """How many submissions are queued (not yet taken into a batch)."""
        return self._queue.qsize()

    def _enqueue(self, sub: Submission, waiter: Waiter) -> None:
        self._queue.put((sub, waiter))

    def _withdraw(self, waiter: LoopWaiter) -> None:
        """Nothing to do: a writer thread drops a submission whose future is done when it takes it."""

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
            # A submission withdrawn while queued is dropped unapplied; the others can no longer be
            # cancelled, so setting their outcome below cannot fail (and kill this thread).
            batch = [item for item in batch if _is_live(item[1])]
            if not batch:
                continue
            outcomes = apply_batch(session, [sub for sub, _ in batch])
            DATABASE_ERRORS.inc(session.take_errors())
            if count_batch(outcomes):
                self.batches += 1
                self.applied += len(batch)
            answer([waiter for _, waiter in batch], outcomes)


def apply_batch(session: WriterSession, subs: list[Submission]) -> list[Result]:
    """Apply ``subs`` in one transaction of ``session``: each one's result.

    A batch that fails as a whole (a full disk, a lost database) gives every submission the same
    exception: the project's 503 for a storage fault (logged once per kind), else the exception.
    Only then is a result an exception (one match refused is an ``ApplyOutcome`` of status error).
    """
    try:
        # Matches posted under the id of a game still being analysed get 409, read in the
        # batch's own transaction. (A game posted after that read is still caught: its
        # worker then fails it with the ledger's conflict.)
        return list(session.apply(subs, held=pending_game_error))
    except BaseException as exc:  # the writer carries on
        fault = storage_fault(exc) if isinstance(exc, Exception) else None
        return [fault or exc] * len(subs)


def batch_facts(results: Sequence[Result]) -> tuple[int, int] | None:
    """``(submissions, new matches)`` of a batch from its results of :func:`apply_batch`, or
    ``None`` if it failed as a whole (then every submission got an exception)."""
    if not results or isinstance(results[0], BaseException):
        return None
    created = sum(1 for r in results if not isinstance(r, BaseException) and r.status == "created")
    return len(results), created


def count_batch(results: Sequence[Result]) -> bool:
    """Count a batch's results of :func:`apply_batch` in the metrics if it committed; whether it did."""
    facts = batch_facts(results)
    if facts is not None:
        record_batch(*facts)
    return facts is not None
