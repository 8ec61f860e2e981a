"""Applying matches: the writer's session (held connection, retries) and the batch entry points.

Guarantees: a batch of matches is applied in one transaction (ledger rows, rating changes and
ratings commit together or not at all); a ``match_id`` is stored once, a repeat with the same
canonical body gets the first answer (derived from the stored facts) and one with a different body a
:class:`~sedma_elo.errors.ConflictError`; ``sequence`` is taken with the players' rows locked, so
matches sharing a player get sequences in the order they were applied.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import psycopg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import PoolProxiedConnection

from ...core.model import Match
from ..payload import Submission, submission_from_match
from .base import LedgerBase
from .batch import TryAgain, is_retryable
from .types import ApplyOutcome, HeldRefusal, ImportReport
from .write_pg import apply_pg, unusable
from .write_sqlite import apply_sqlite

__all__ = ["WriterSession", "WritesMixin"]

if TYPE_CHECKING:
    from .bulk_import import Progress, Source

_log = logging.getLogger("sedma_elo.service.ledger")
_RETRIES = 20


#: Matches created by one :meth:`Ledger.import_matches` from which PostgreSQL's statistics are
#: refreshed at its end (autovacuum's own threshold is 50 rows plus a tenth of the table).
ANALYZE_AFTER = 1000


class WriterSession:
    """One writer's database connection, held across batches: no pool checkout (or ping) per batch.

    :meth:`apply` has the contract of :meth:`Ledger.apply`. One session per thread; get one from
    :meth:`Ledger.writer_session`, which closes it.
    """

    def __init__(self, ledger: LedgerBase) -> None:
        self.ledger = ledger
        self._conn: PoolProxiedConnection | None = None
        self._driver_errors = 0

    def take_errors(self) -> int:
        """How many errors the database driver raised in this session since the last call (each
        failed attempt of a batch counts, retried or not): ``sedma_elo_database_errors_total`` adds
        them, since the session talks to the driver past SQLAlchemy's error events."""
        count, self._driver_errors = self._driver_errors, 0
        return count

    def close(self) -> None:
        """Return the connection to the pool (on PostgreSQL as the pool handed it out: the default
        plan choice, out of autocommit mode)."""
        if self._conn is not None:
            raw = self._conn.driver_connection
            if unusable(raw):  # lost, or closed after a failed rollback: not handed out again
                self._conn.invalidate()
            elif isinstance(raw, psycopg.Connection):
                try:
                    _plan_cache_mode(raw, "auto")
                    raw.autocommit = False
                except psycopg.Error:  # a connection that cannot say it is not handed out again
                    self._conn.invalidate()
            self._conn.close()
            self._conn = None

    def apply(
        self, submissions: Sequence[Submission], *, answers: bool = True, held: HeldRefusal | None = None
    ) -> list[ApplyOutcome]:
        """See :meth:`Ledger.apply`; with ``held``, a match whose id a game record waiting for its
        analysis holds (read in the batch's transaction) gets the error ``held(match_id)`` instead
        (what the API answers; the game's worker applies that match itself, without ``held``)."""
        if not submissions:
            return []
        try:
            return self._apply(submissions, answers, held)
        finally:  # after the commit, before anyone is answered (the read cache's freshness)
            self.ledger.note_change()

    def _apply(
        self, submissions: Sequence[Submission], answers: bool, held: HeldRefusal | None
    ) -> list[ApplyOutcome]:
        try:
            return self._apply_with_retry(submissions, answers, held)
        except Exception:
            if len(submissions) == 1:
                raise
        outcomes = []
        for sub in submissions:
            try:
                outcomes.append(self._apply_with_retry([sub], answers, held)[0])
            except Exception as exc:  # only this match fails (answered 500); the others stand
                outcomes.append(ApplyOutcome("error", failure=exc))
        return outcomes

    def _apply_with_retry(
        self, submissions: Sequence[Submission], answers: bool, held: HeldRefusal | None
    ) -> list[ApplyOutcome]:
        for attempt in range(_RETRIES):
            try:
                return self._apply_once(submissions, answers, held)
            except (DBAPIError, psycopg.Error, sqlite3.Error, TryAgain) as exc:
                if not isinstance(exc, TryAgain) or exc.__cause__ is not None:
                    self._driver_errors += 1  # a TryAgain without a cause is a race, not an error
                if attempt == _RETRIES - 1 or not is_retryable(exc):
                    raise
                _log.info("retrying a batch of %d: %s", len(submissions), str(exc).splitlines()[0])
                time.sleep(0.002 * (attempt + 1))
        raise AssertionError("unreachable")

    def _apply_once(
        self, subs: Sequence[Submission], answers: bool, held: HeldRefusal | None
    ) -> list[ApplyOutcome]:
        if self._conn is not None and unusable(self._conn.driver_connection):
            self._conn.invalidate()  # lost, or closed after a failed ROLLBACK (write_pg._rollback)
            self._conn = None
        if self._conn is None:
            self._conn = self.ledger.db.write.raw_connection()
            if isinstance(self._conn.driver_connection, psycopg.Connection):
                _plan_cache_mode(self._conn.driver_connection, "force_generic_plan")
                # apply_pg sends its batch's BEGIN and COMMIT itself (two round trips a batch).
                self._conn.driver_connection.autocommit = True
        raw = self._conn.driver_connection
        if isinstance(raw, sqlite3.Connection):
            return apply_sqlite(self.ledger, raw, subs, answers=answers, held=held)
        assert isinstance(raw, psycopg.Connection)
        try:
            return apply_pg(self.ledger, raw, subs, answers=answers, held=held)
        except psycopg.Error as exc:
            if raw.broken:  # e.g. the server restarted: a new connection may well succeed
                self._conn.invalidate()
                self._conn = None
                raise TryAgain("the database connection was lost") from exc
            raise


def _plan_cache_mode(raw: psycopg.Connection[Any], mode: str) -> None:
    """Set the session's ``plan_cache_mode`` and commit (outside a batch's transaction).

    The writer's statements are prepared (psycopg prepares a statement from its fifth run), and their
    plans do not depend on the values: an index lookup per element of the arrays. With ``auto``
    PostgreSQL kept planning the ledger rows' insert and the stored-ids read again for each batch (a
    custom plan looked cheaper: it knows the arrays' length), about 125 µs of the server's CPU a
    batch of 8 (docs/service-measurements.md, "The writer's plans, and a fast hour").
    """
    raw.execute(f"SET plan_cache_mode = {mode}")
    raw.commit()


class WritesMixin(LedgerBase):
    """Applying matches: batches (the path of ``POST /v1/matches``) and whole files (``import``)."""

    def apply(self, submissions: Sequence[Submission], *, answers: bool = True) -> list[ApplyOutcome]:
        """Apply a batch of matches in one transaction, in the given order; never raises for one bad match.

        A repeated ``match_id`` (stored before or earlier in the batch) gets ``repeat`` when its
        canonical body is equal and a :class:`ConflictError` otherwise. If the batch transaction
        fails as a whole, each match is retried in a transaction of its own so that one bad match
        cannot fail the others. With ``answers=False`` a repeat of a stored match has an empty
        ``body``: its answer is not derived (it costs about what rating a new match costs).
        """
        with self.writer_session() as session:
            return session.apply(submissions, answers=answers)

    @contextmanager
    def writer_session(self) -> Iterator[WriterSession]:
        """A :class:`WriterSession` on this ledger, closed (its connection returned) at the end."""
        session = WriterSession(self)
        try:
            yield session
        finally:
            session.close()

    def import_history(
        self,
        source: Source,
        *,
        skip_bad: bool = False,
        progress: Progress | None = None,
        chunk: int | None = None,
    ) -> ImportReport:
        """Import a history file in one transaction, a chunk at a time (``sedma-elo import``).

        ``source`` is the file read whole or its chunks (:func:`~sedma_elo.batch.history.iter_lined`);
        ``chunk`` the most rows handled at once (default :data:`.bulk_import.CHUNK`). The same
        stored rows as posting its matches one by one; a match already stored with the same body
        is a repeat, one with a different body (or twice in the file) refuses the file
        (``skip_bad``: leaves it out, listed in ``refused``). See :mod:`.bulk_import`.

        Raises:
            HistoryError: a conflicting or doubled match (without ``skip_bad``), a match the rating
                core refuses, or a bad row of a chunk read, its line named; nothing is stored.
        """
        from .bulk_import import CHUNK, bulk_import

        try:
            return bulk_import(self, source, skip_bad=skip_bad, progress=progress, chunk=chunk or CHUNK)
        finally:
            self.note_change()

    def import_matches(self, items: Iterable[Match], batch: int = 1000) -> ImportReport:
        """Apply matches through the same path as ``POST /v1/matches``, ``batch`` per transaction.

        Matches already in the ledger with the same body count as repeats; a different body under a
        known ``match_id`` is a conflict and is skipped (listed in the report), as are matches the
        engine refuses.

        Raises:
            SedmaEloError or a database error: a batch failed for a reason not its matches' (no
                active version, a lost connection); the batches before it stay stored.
        """
        report = ImportReport()
        pending: list[Submission] = []

        def flush() -> None:
            for sub, outcome in zip(pending, self.apply(pending, answers=False), strict=True):
                if outcome.status == "created":
                    report.created += 1
                elif outcome.status == "repeat":
                    report.repeated += 1
                elif outcome.failure is not None:
                    # Not the match's fault (no active version, a lost database): the import stops,
                    # where it was listed as refused with the reason "None".
                    raise outcome.failure
                else:
                    report.refused.append(f"{sub.match_id}: {outcome.error}")
            pending.clear()

        for match in items:
            pending.append(submission_from_match(match))
            if len(pending) >= batch:
                flush()
        if pending:
            flush()
        if self._pg and report.created >= ANALYZE_AFTER:
            self._analyze_imported()
        return report

    def _analyze_imported(self) -> None:
        """``ANALYZE`` what an import filled (PostgreSQL), as ``sedma-elo import`` does at its end.

        Until autovacuum gets to it, a ledger filled by thousands of matches at once is planned
        with the statistics of the empty tables: the writer's lock of the players' rows then read
        all of a version's ratings (1.3 ms against 0.1 ms for 16 players of 10,000, and 0.69 of a
        core for the PostgreSQL server at 590 writes/s; docs/service-measurements.md, "The writer process").
        """
        from .pg_bulk import IMPORTED_TABLES, analyze

        with self.db.write.begin() as conn:
            analyze(conn.connection.driver_connection, IMPORTED_TABLES)
