"""The SQLite write path: one batch in one ``BEGIN IMMEDIATE`` transaction under the write lock.

Driver-level statements on the writer's held sqlite3 connection: the SQLAlchemy layers cost the
writer a fifth of its CPU here.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence

from ...errors import NotFoundError
from ..payload import Submission
from .answers import repeat_answers
from .base import LedgerBase
from .batch import Batch, BatchRows, rate_batch
from .counts import move_counts, rating_moves
from .feed_events import append_match_events
from .rows import fact_values, intern_sqlite, stored_hash
from .sql import (
    SQLITE_HELD_GAMES,
    SQLITE_INSERT_CHANGES,
    SQLITE_INSERT_MATCHES,
    SQLITE_INSERT_PLAYERS,
    SQLITE_UPDATE_PLAYERS,
)
from .types import ApplyOutcome, HeldRefusal

__all__ = ["apply_sqlite", "write_players_sqlite", "write_rows_sqlite"]


def apply_sqlite(
    ledger: LedgerBase,
    raw: sqlite3.Connection,
    subs: Sequence[Submission],
    *,
    answers: bool = True,
    held: HeldRefusal | None = None,
) -> list[ApplyOutcome]:
    """Apply ``subs`` in one SQLite transaction on ``raw``, holding the database's write lock
    (``answers``, ``held``: see :meth:`WriterSession.apply`)."""
    with ledger.db.write_lock or contextlib.nullcontext():
        raw.execute("BEGIN IMMEDIATE")
        try:
            outcomes = _apply_in(ledger, raw, subs, answers, held)
            raw.execute("COMMIT")
        except BaseException:
            if raw.in_transaction:
                raw.rollback()
            raise
    return outcomes


def _apply_in(
    ledger: LedgerBase,
    raw: sqlite3.Connection,
    subs: Sequence[Submission],
    answers: bool,
    held: HeldRefusal | None,
) -> list[ApplyOutcome]:
    active = raw.execute("SELECT id FROM rating_versions WHERE active").fetchone()
    if active is None:
        raise NotFoundError("there is no active ratings version")
    version = ledger._version_raw(raw, int(active[0]))
    ids = list({s.match_id for s in subs})
    marks = ", ".join("?" * len(ids))
    stored = {
        row[0]: (stored_hash(row[1]), int(row[2]))
        for row in raw.execute(
            f"SELECT match_id, body_hash, sequence FROM matches WHERE match_id IN ({marks})", ids
        )
    }
    games = set()
    if held is not None:
        games = {r[0] for r in raw.execute(SQLITE_HELD_GAMES.format(marks=marks), ids)}
    derive = repeat_answers(raw, "?", ledger._version_raw, subs, stored) if answers else None
    batch = Batch(subs, stored, derive, games, held)
    players = sorted({p for i in batch.todo for p in subs[i].match.players})
    ratings: dict[str, int] = {}
    played: dict[str, int] = {}
    keys: dict[str, int] = {}
    if players:
        # With their keys (a player rated in this version has one): one statement fewer per batch.
        # ORDER BY player_id steers SQLite to the primary key; without it the planner scanned the
        # whole version through the rank index (a 3x slower write path at 100,000 players).
        rows = raw.execute(
            "SELECT r.player_id, r.rating, r.matches_played, p.id FROM player_ratings r"
            " JOIN players p ON p.player_id = r.player_id WHERE r.version_id = ?"
            f" AND r.player_id IN ({', '.join('?' * len(players))}) ORDER BY r.player_id",
            (version.id, *players),
        )
        for pid, rating, count, key in rows:
            ratings[pid] = rating
            played[pid] = count
            keys[pid] = key
    known = set(ratings)
    # The sequence is taken only now, with the database's write lock held.
    top = int(raw.execute("SELECT coalesce(max(sequence), 0) FROM matches").fetchone()[0])
    sequences = range(top + 1, top + 1 + len(batch.todo))
    out = rate_batch(batch, version, ratings, played, sequences)
    if out.matches:
        write_rows_sqlite(raw, version.id, out, keys)
        write_players_sqlite(raw, version.id, ratings, played, out.last_seq, known)
        move_counts(raw, False, version.id, rating_moves(out.changes, ratings, known))
        append_match_events(raw, version.id, out)
    batch.answer(out, version)
    return batch.settle()


def write_rows_sqlite(
    raw: sqlite3.Connection, version_id: int, rows: BatchRows, known: dict[str, int] | None = None
) -> None:
    """Insert a rated batch's ledger rows and rating changes; ``known`` holds keys already read,
    the other players are looked up or interned first."""
    keys = dict(known or {})
    keys.update(intern_sqlite(raw, [p for p in rows.last_seq if p not in keys]))
    raw.executemany(
        SQLITE_INSERT_MATCHES,
        [
            (seq, *fact_values(sub, keys.__getitem__), version_id, rows.created_at)
            for seq, sub in rows.matches
        ],
    )
    raw.executemany(
        SQLITE_INSERT_CHANGES,
        [(version_id, keys[pid], seq, before, after) for seq, pid, before, after in rows.changes],
    )


def write_players_sqlite(
    raw: sqlite3.Connection,
    version_id: int,
    ratings: dict[str, int],
    played: dict[str, int],
    last_seq: dict[str, int],
    known: set[str],
) -> None:
    """Store rating, count and last sequence of every player in ``last_seq`` (``known`` ones updated)."""
    ordered = sorted(last_seq)
    raw.executemany(
        SQLITE_UPDATE_PLAYERS,
        [(ratings[p], played[p], last_seq[p], version_id, p) for p in ordered if p in known],
    )
    raw.executemany(
        SQLITE_INSERT_PLAYERS,
        [(version_id, p, ratings[p], played[p], last_seq[p]) for p in ordered if p not in known],
    )
