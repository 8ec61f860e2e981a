"""The PostgreSQL write path: one batch in one transaction of two round trips.

The first round trip begins the transaction, takes the locks and reads (active version, stored ids,
the players' rows ``FOR UPDATE`` in player id order, then the sequences); the second writes and
commits. Statements run in the order sent, so every sequence is still taken with the players locked.

Each round trip's statements go out together through a :class:`~.pg_pipe.Pipe` (libpq's pipeline
mode, each statement prepared once per connection), not one by one through psycopg's pipeline:
docs/service-measurements.md, "One send a phase". The writer's connection is in autocommit mode
(:class:`~.writes.WriterSession`) and the batch sends ``BEGIN`` and ``COMMIT`` itself (two round
trips a batch where psycopg's own transaction block takes four: "Two round trips a batch").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from ...errors import NotFoundError
from ..payload import Submission
from .answers import repeat_answers
from .base import LedgerBase
from .batch import Batch, BatchRows, TryAgain, rate_batch
from .counts import move_counts, rating_moves
from .feed_events import append_match_events
from .pg_arrays import Int4Array, Int8Array, TextArray, array_of
from .pg_pipe import Pipe, forget_prepared
from .rows import PG_INTERN, fact_values, stored_hash
from .sql import (
    PG_FACT_TYPES,
    PG_HELD_GAMES,
    PG_INSERT_CHANGES,
    PG_INSERT_MATCHES,
    PG_INSERT_PLAYERS,
    PG_LOCK_PLAYERS,
    PG_SEQUENCES,
    PG_STORED,
    PG_UPDATE_PLAYERS,
)
from .types import ApplyOutcome, HeldRefusal

__all__ = ["apply_pg", "unusable", "write_players_pg", "write_rows_pg"]


def apply_pg(
    ledger: LedgerBase,
    raw: psycopg.Connection[Any],
    subs: Sequence[Submission],
    *,
    answers: bool = True,
    held: HeldRefusal | None = None,
) -> list[ApplyOutcome]:
    """Apply ``subs`` in one PostgreSQL transaction on ``raw``, a connection in autocommit mode
    (``answers``, ``held``: see :meth:`WriterSession.apply`). A batch that raises is rolled back.

    Raises:
        ValueError: ``raw`` is not in autocommit mode (psycopg would begin a transaction of its own).
        TryAgain: another process stored one of the batch's ids between two of its reads.
    """
    if not raw.autocommit:
        raise ValueError("apply_pg needs a connection in autocommit mode: it sends BEGIN and COMMIT")
    try:
        with Pipe(raw) as pipe:
            batch = _apply_in_pipe(ledger, raw, pipe, subs, answers, held)
    except BaseException:
        _rollback(raw)
        raise
    return batch.settle()


def unusable(raw: object) -> bool:
    """Whether ``raw``, a writer's held connection, is a PostgreSQL one that can take no more
    batches: lost (broken), or closed by :func:`_rollback`."""
    return isinstance(raw, psycopg.Connection) and (raw.closed or raw.broken)


def _rollback(raw: psycopg.Connection[Any]) -> None:
    """End a failed batch's transaction on the autocommit connection ``raw``, if one is still open
    (a statement failed, or the batch raised before its ``COMMIT``). Never raises: a connection
    whose ``ROLLBACK`` fails is closed, and its session, like one of a broken connection, drops it."""
    forget_prepared(raw)  # psycopg's rollback below may DEALLOCATE ALL
    if unusable(raw) or raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        return
    try:
        # psycopg's own rollback, not a ROLLBACK statement: it also forgets the statements it
        # counts as prepared (DEALLOCATE ALL), which a failed pipeline may have left half made.
        raw.rollback()
    except psycopg.Error:  # its transaction state unknown: not used again
        raw.close()


def _apply_in_pipe(
    ledger: LedgerBase,
    raw: psycopg.Connection[Any],
    pipe: Pipe,
    subs: Sequence[Submission],
    answers: bool,
    held: HeldRefusal | None,
) -> Batch:
    """A batch in two phases on ``pipe``: the locks and reads (one round trip), then the writes,
    sent together before the answers are built, and the ``COMMIT``; the batch, its answers built."""
    ids = TextArray(dict.fromkeys(s.match_id for s in subs))
    players = TextArray(sorted({p for s in subs for p in s.match.players}))
    pipe.execute("BEGIN")
    # Conflicts with void/re-rate's EXCLUSIVE lock, so the active version read is current.
    pipe.execute("LOCK TABLE matches IN ROW EXCLUSIVE MODE")
    active_cur = pipe.execute("SELECT id FROM rating_versions WHERE active")
    stored_cur = pipe.execute(PG_STORED, (ids,))
    games_cur = None if held is None else pipe.execute(PG_HELD_GAMES, (ids,))
    players_cur = pipe.execute(PG_LOCK_PLAYERS, (players,))
    seq_cur = pipe.execute(PG_SEQUENCES, (len(ids), ids))
    active = active_cur.fetchone()  # the phase's sync: one round trip
    if active is None:
        raise NotFoundError("there is no active ratings version")
    # Out of pipeline mode between the phases: psycopg reads here on the same transaction.
    version = ledger._version_raw(raw, int(active[0]))
    stored = {r[0]: (stored_hash(r[1]), int(r[2])) for r in stored_cur.fetchall()}
    derive = None
    if answers:
        repeats = repeat_answers(raw, "%s", ledger._version_raw, subs, stored)

        def derive(sequence: int) -> str:
            pipe.sync()  # a repeat's answer is read by psycopg: the writes' phase ends first
            return repeats(sequence)

    games = set() if games_cur is None else {r[0] for r in games_cur.fetchall()}
    batch = Batch(subs, stored, derive, games, held)
    ratings = {}
    played = {}
    for pid, rating, count in players_cur.fetchall():
        ratings[pid] = rating
        played[pid] = count
    known = set(ratings)
    sequences = sorted(int(r[0]) for r in seq_cur.fetchall())
    if len(sequences) < len(batch.todo):
        raise TryAgain("a match of the batch was stored concurrently")
    rows_out = rate_batch(batch, version, ratings, played, sequences)
    if rows_out.matches:
        write_rows_pg(pipe, version.id, rows_out, known)
        write_players_pg(pipe, version.id, ratings, played, rows_out.last_seq, known)
        append_match_events(pipe, version.id, rows_out)  # its lock is held until the commit
        # Under the feed's lock, which serialises the writers until their commit anyway: taken
        # before it, the hot rows' locks made writers wait on one another (-13% writes/s).
        move_counts(pipe, True, version.id, rating_moves(rows_out.changes, ratings, known))
    pipe.flush()  # the server stores the batch while the answers are built
    batch.answer(rows_out, version)  # before the COMMIT: a batch that fails here stores nothing
    pipe.execute("COMMIT")
    pipe.sync()  # the commit confirmed: only then are the answers handed out
    return batch


def write_rows_pg(raw: Pipe, version_id: int, rows: BatchRows, known: set[str]) -> None:
    """Insert a rated batch's ledger rows and rating changes: one statement per table over arrays
    (fixed texts that the pipe prepares once per connection). Players not in ``known`` (rated in
    this version before) are interned first; the statements look every key up themselves."""
    new = sorted(p for p in rows.last_seq if p not in known)
    if new:
        raw.execute(PG_INTERN, (TextArray(new),))
    facts = [fact_values(sub, str) for _, sub in rows.matches]
    columns = [array_of(t, col) for t, col in zip(PG_FACT_TYPES, zip(*facts, strict=True), strict=True)]
    raw.execute(
        PG_INSERT_MATCHES,
        (version_id, rows.created_at, Int8Array(seq for seq, _ in rows.matches), *columns),
    )
    c = rows.changes
    raw.execute(
        PG_INSERT_CHANGES,
        (
            version_id,
            TextArray(r[1] for r in c),
            Int8Array(r[0] for r in c),
            Int4Array(r[2] for r in c),
            Int4Array(r[3] for r in c),
        ),
    )


def write_players_pg(
    raw: Pipe | psycopg.Connection[Any],
    version_id: int,
    ratings: dict[str, int],
    played: dict[str, int],
    last_seq: dict[str, int],
    known: set[str],
) -> None:
    """Store rating, count and last sequence of every player in ``last_seq`` (``known`` ones updated).

    One statement per kind over arrays instead of one per player; players go in id order, so
    concurrent inserts cannot deadlock.
    """
    ordered = sorted(last_seq)
    old = TextArray(p for p in ordered if p in known)
    new = TextArray(p for p in ordered if p not in known)
    if old:
        raw.execute(PG_UPDATE_PLAYERS, (old, *_player_columns(old, ratings, played, last_seq), version_id))
    if new:
        raw.execute(PG_INSERT_PLAYERS, (version_id, new, *_player_columns(new, ratings, played, last_seq)))


def _player_columns(
    ids: list[str], ratings: dict[str, int], played: dict[str, int], last_seq: dict[str, int]
) -> tuple[Int4Array, Int4Array, Int8Array]:
    """The rating, games played and last sequence of each of ``ids``, as the statements' arrays."""
    return (
        Int4Array(ratings[p] for p in ids),
        Int4Array(played[p] for p in ids),
        Int8Array(last_seq[p] for p in ids),
    )
