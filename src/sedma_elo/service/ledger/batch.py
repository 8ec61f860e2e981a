"""What both databases' write paths share: sorting a batch into repeats and new matches, and rating it.

A batch is rated with the one fold (:class:`~sedma_elo.core.fold.RatingState`), so the games a
player has played (their ``matches_played``) reach every rule that needs them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import partial

import psycopg
from sqlalchemy.exc import IntegrityError, OperationalError

from ...core.engine import RatingResult
from ...core.fold import RatingState
from ...errors import ConflictError, SedmaEloError
from ..payload import Submission
from .rows import now_micros
from .types import ApplyOutcome, HeldRefusal, VersionInfo
from .views import response_text, summary_of, summary_text

__all__ = ["Batch", "BatchRows", "TryAgain", "is_retryable", "rate_batch"]

#: unique_violation (a concurrent insert of the same id), serialization_failure, deadlock_detected,
#: invalid_sql_statement_name (a statement the writer prepared was dropped: pg_pipe prepares it again)
_RETRYABLE_SQLSTATES = frozenset({"23505", "40001", "40P01", "26000"})


class TryAgain(Exception):
    """The batch met a passing condition (a concurrent write between its reads, a lost connection)."""


def is_retryable(exc: Exception) -> bool:
    """Whether a failed batch may succeed when tried again (a race with another writer)."""
    if isinstance(exc, TryAgain | IntegrityError):
        return True  # a concurrent insert of the same player or match id; the retry sees it
    if isinstance(exc, OperationalError):
        msg = str(exc.orig).lower()
        return "deadlock" in msg or "could not serialize" in msg or "database is locked" in msg
    if isinstance(exc, sqlite3.OperationalError):  # a writer outside the lock file outlasted busy_timeout
        return "database is locked" in str(exc).lower()
    return isinstance(exc, psycopg.Error) and exc.sqlstate in _RETRYABLE_SQLSTATES


def _text(sub: Submission, seq: int, version: VersionInfo, result: RatingResult) -> str:
    """The answer text of a new match in the form ``sub`` asks (the summary for ``minimal``)."""
    return (summary_text if sub.minimal else response_text)(sub, seq, version, result)


def _in_form(sub: Submission, answer: Callable[[int], str], sequence: int) -> str:
    """``answer(sequence)`` (a stored match's full answer) in the form ``sub`` asks."""
    text = answer(sequence)
    return summary_of(text) if sub.minimal else text


def _repeat_or_conflict(sub: Submission, body_hash: str, response: Callable[[], str]) -> ApplyOutcome:
    """A repeat answered ``response()`` (derived only then) when the body is equal, else a conflict."""
    if body_hash == sub.body_hash:
        return ApplyOutcome("repeat", response())
    return ApplyOutcome(
        "error",
        error=ConflictError(f"match_id {sub.match_id!r} was already used for a different match"),
    )


class Batch:
    """A batch's submissions sorted into repeats of stored ids, repeats within the batch and new ones.

    ``todo`` holds the indexes to apply, in arrival order; :meth:`settle` answers the in-batch
    repeats from the outcome of their first occurrence once that is known. ``stored`` maps a stored
    match id to its ``(body hash as hex text, sequence)``; ``answer`` derives the answer of a stored
    sequence (called only for a repeat with an equal body; ``None``: such a repeat's body is empty).
    An id in ``held`` (a game record's, waiting for its analysis) is refused with ``refuse(id)``.
    """

    def __init__(
        self,
        subs: Sequence[Submission],
        stored: dict[str, tuple[str, int]],
        answer: Callable[[int], str] | None,
        held: Collection[str] = (),
        refuse: HeldRefusal | None = None,
    ) -> None:
        self.subs = subs
        self.outcomes: list[ApplyOutcome | None] = [None] * len(subs)
        # Each new match's sequence and result: a repeat later in the batch may ask the other
        # form of answer than the first occurrence got (:meth:`settle`).
        self.created: dict[int, tuple[int, RatingResult]] = {}
        self.version: VersionInfo | None = None
        self.first: dict[str, int] = {}
        self.todo: list[int] = []
        for i, sub in enumerate(subs):
            seen = stored.get(sub.match_id)
            if refuse is not None and sub.match_id in held:
                self.outcomes[i] = ApplyOutcome("error", error=refuse(sub.match_id))
            elif seen is not None:
                text = partial(str) if answer is None else partial(_in_form, sub, answer, seen[1])
                self.outcomes[i] = _repeat_or_conflict(sub, seen[0], text)
            elif sub.match_id not in self.first:
                self.first[sub.match_id] = i
                self.todo.append(i)

    def answer(self, rows: BatchRows, version: VersionInfo) -> None:
        """Give each match :func:`rate_batch` rated its outcome, with its answer text.

        Apart from rating, so that a write path can build the texts while the database writes
        (call before :meth:`settle`).
        """
        for i, seq, result in rows.rated:
            self.outcomes[i] = ApplyOutcome("created", _text(self.subs[i], seq, version, result))
            self.created[i] = (seq, result)
        self.version = version
        rows.rated.clear()

    def settle(self) -> list[ApplyOutcome]:
        """Every submission's outcome, in order (call after each ``todo`` index has one)."""
        out = []
        for i, sub in enumerate(self.subs):
            outcome = self.outcomes[i]
            if outcome is None:
                j = self.first[sub.match_id]
                first = self.outcomes[j]
                assert first is not None
                if first.status == "created":
                    if sub.minimal == self.subs[j].minimal:
                        text = partial(str, first.body)
                    else:
                        assert self.version is not None
                        seq, result = self.created[j]
                        text = partial(_text, sub, seq, self.version, result)
                    outcome = _repeat_or_conflict(sub, self.subs[j].body_hash, text)
                else:
                    outcome = first
            out.append(outcome)
        return out


@dataclass
class BatchRows:
    """What a rated batch adds: each new match with its sequence, the rating changes as
    ``(sequence, player id, before, after)``, each player's last sequence, the batch's time; and
    the results still to answer (:meth:`Batch.answer`) as ``(index in the batch, sequence, result)``."""

    matches: list[tuple[int, Submission]] = field(default_factory=list)
    rated: list[tuple[int, int, RatingResult]] = field(default_factory=list)
    changes: list[tuple[int, str, int, int]] = field(default_factory=list)
    last_seq: dict[str, int] = field(default_factory=dict)
    created_at: int = 0  # microseconds since 1970-01-01 UTC (rows.now_micros)


def rate_batch(
    batch: Batch,
    version: VersionInfo,
    ratings: dict[str, int],
    played: dict[str, int],
    sequences: Sequence[int],
) -> BatchRows:
    """Rate the batch's new matches in order, updating ``ratings`` and ``played`` in place.

    ``sequences`` holds at least one sequence per new match, ascending. A match the engine refuses
    (a :class:`SedmaEloError`) gets an error outcome, no row and no sequence; a rated one is left
    in ``rated`` for :meth:`Batch.answer`.
    """
    out = BatchRows(created_at=now_micros())
    state = RatingState(ratings, played)
    used = 0
    for i in batch.todo:
        sub = batch.subs[i]
        try:
            result = state.rate(sub.match, version.rules)
        except SedmaEloError as exc:
            batch.outcomes[i] = ApplyOutcome("error", error=exc)
            continue
        seq = sequences[used]
        used += 1
        out.rated.append((i, seq, result))
        state.commit(result)
        for change in result.changes:
            pid = change.player_id
            out.last_seq[pid] = seq
            out.changes.append((seq, pid, change.rating_before, change.rating_after))
        out.matches.append((seq, sub))
    return out
