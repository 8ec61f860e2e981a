"""One rebuild of a ratings version from a sequence on: the standing before it, the rating, the writes.

:class:`Rebuild` is what re-rate, activate and void share (:mod:`.versions`). It reads the
version's standing just before ``start`` without changing anything (:meth:`Rebuild.__init__`),
rates the ledger from there in chunks (:meth:`Rebuild.rate`, :mod:`.bulk`), and writes: the roll
back of the player rows and the deletion of the old changes (:meth:`Rebuild.roll_back`), the new
changes (:func:`.bulk.write_changes`) and the new player rows (:meth:`Rebuild.write_players`).
A re-rate streams (rate a chunk, write it); a void rates everything first, so that it can compare
the new changes with the old ones before anything is written (:func:`changed_sequences`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .answers import Standings
from .bulk import Int64Array, KeyState, names_of, query_int64, rate_chunk, use_kernel
from .counts import recount
from .packed import verify_chunks
from .types import VersionInfo
from .write_pg import write_players_pg
from .write_sqlite import write_players_sqlite

__all__ = [
    "PLAYER_CHUNK",
    "REBUILD_CACHE_KIB",
    "Rebuild",
    "changed_sequences",
    "rebuild_cache",
    "standings_table",
    "store_players",
]

#: ``progress(done, total)``: matches rebuilt so far of those to rebuild.
Progress = Callable[[int, int], None]

#: SQLite page cache of a rebuild's connection, KiB: a rebuild's inserts touch every player's part
#: of the clustered ``rating_changes`` once per chunk; SQLite's default cache (2 MB) re-read them.
REBUILD_CACHE_KIB = 65_536
#: Player rows per statement of :func:`store_players`.
PLAYER_CHUNK = 50_000


@contextmanager
def rebuild_cache(raw: Any, pg: bool) -> Iterator[None]:
    """On SQLite, a page cache of :data:`REBUILD_CACHE_KIB` for the block, then the one before
    (bounded: memory does not grow with the ledger); nothing on PostgreSQL."""
    if pg:
        yield
        return
    before = int(raw.execute("PRAGMA cache_size").fetchone()[0])
    raw.execute(f"PRAGMA cache_size = {-REBUILD_CACHE_KIB}")
    try:
        yield
    finally:
        raw.execute(f"PRAGMA cache_size = {before}")


class Rebuild:
    """The rebuild of ``version`` for the non-voided matches with ``start <= sequence <= end``
    (``skip``: a sequence to leave out, the match a void is about to flag)."""

    def __init__(
        self, raw: Any, ph: str, version: VersionInfo, start: int, end: int, skip: int | None = None
    ) -> None:
        self.raw, self.ph, self.pg = raw, ph, ph == "%s"
        self.version, self.start, self.end, self.skip = version, start, end, skip
        v, s = version.id, int(start)
        size = int(raw.execute("SELECT coalesce(max(id), 0) + 1 FROM players").fetchone()[0])
        self.state = state = KeyState.fresh(size, version.rules)
        earlier = (
            f"FROM rating_changes e WHERE e.version_id = {v} AND e.player_key = f.player_key"
            f" AND e.sequence < {s}"
        )
        # Every player with a change from ``start`` on: the rating before the first such change,
        # the count and last sequence of the earlier ones.
        self.touched: list[tuple[Any, ...]] = raw.execute(
            f"SELECT f.player_key, p.player_id, rc.rating_before, (SELECT count(*) {earlier}),"
            f" (SELECT max(e.sequence) {earlier})"
            " FROM (SELECT player_key, min(sequence) AS first FROM rating_changes"
            f" WHERE version_id = {v} AND sequence >= {s} GROUP BY player_key) f"
            f" JOIN rating_changes rc ON rc.version_id = {v} AND rc.player_key = f.player_key"
            " AND rc.sequence = f.first JOIN players p ON p.id = f.player_key"
        ).fetchall()
        rows = query_int64(
            raw,
            self.pg,
            "SELECT p.id, pr.rating, pr.matches_played FROM player_ratings pr"
            f" JOIN players p ON p.player_id = pr.player_id WHERE pr.version_id = {v}",
            (4, 4, 4),
        )
        keys = rows[:, 0]
        state.ratings[keys] = rows[:, 1]
        state.games[keys] = rows[:, 2]
        known = set(keys.tolist())
        #: Per key: the version's changes before ``start`` of every touched player.
        self.earlier = np.zeros(size, dtype=np.int64)
        for key, _, before, count, _ in self.touched:
            self.earlier[key] = count
            if count:
                state.ratings[key], state.games[key] = before, count
            else:  # no change before ``start``: the player is new to this part of the ledger
                known.discard(key)
                state.ratings[key], state.games[key] = version.rules.initial_rating, 0
        self.known = known
        self.total = int(
            raw.execute(
                f"SELECT count(*) FROM matches WHERE NOT voided AND sequence >= {ph} AND sequence <= {ph}",
                (start, end),
            ).fetchone()[0]
        ) - (skip is not None)

    def rate(self, progress: Progress | None = None) -> Generator[Int64Array]:
        """Rate the ledger from ``start`` chunk by chunk: each chunk's changes ``(seq, key, before, after)``.

        Everything is read on ``raw``, in line (SQLite's chunks are packed texts,
        :func:`.packed.verify_chunks`). A reading thread on a second connection and a writing thread
        (branch rerate3) measured no gain once a re-rate's rows went into a bare partition on
        PostgreSQL (docs/service-measurements.md, "Re-rate on both databases"), nor on SQLite.

        Raises:
            ValidationError: the rules refuse a match (as the fold would).
        """
        kernel = use_kernel(self.total)
        placeholders = [""] * len(self.state.ratings)
        done = 0
        for _, _, rows in verify_chunks(self.raw, self.pg, self.start, self.end):
            if self.skip is not None:
                rows = rows[rows[:, 0] != self.skip]
            yield rate_chunk(self.raw, self.ph, rows, self.version.rules, self.state, placeholders, kernel)
            done += len(rows)
            if progress is not None:
                progress(done, self.total)

    def roll_back(self) -> None:
        """Set the version's player rows back to their standing before ``start`` and delete its
        changes from ``start`` on (a player without an earlier change loses their row)."""
        if not self.touched:
            return
        ph, v = self.ph, self.version.id
        cur = self.raw.cursor()
        gone = [(v, pid) for _, pid, _, count, _ in self.touched if count == 0]
        kept = [(before, count, top, v, pid) for _, pid, before, count, top in self.touched if count > 0]
        if gone:
            cur.executemany(f"DELETE FROM player_ratings WHERE version_id = {ph} AND player_id = {ph}", gone)
        if kept:
            cur.executemany(
                f"UPDATE player_ratings SET rating = {ph}, matches_played = {ph}, last_sequence = {ph}"
                f" WHERE version_id = {ph} AND player_id = {ph}",
                kept,
            )
        cur.execute(f"DELETE FROM rating_changes WHERE version_id = {v} AND sequence >= {int(self.start)}")

    def write_players(self) -> None:
        """Store the rating, count and last sequence of every player the rebuild rated."""
        store_players(self.raw, self.ph, self.version.id, self.state, self.known)


def store_players(
    raw: Any, ph: str, version_id: int, state: KeyState, known: set[int], chunk: int | None = None
) -> None:
    """Store the rating, count and last sequence of every key with a last sequence in ``state``
    (the ones in ``known``, which have a row in ``version_id``, updated; the others inserted), then
    count the version's players by rating again (:func:`.counts.recount`).

    The rows go in player id order (as the one-statement writers order them), ``chunk`` players a
    statement (default :data:`PLAYER_CHUNK`, read at call time): memory holds one chunk's rows,
    not every player's (an import of a million players peaked at its end, 650 -> 1,063 MB,
    building them all at once)."""
    played = np.flatnonzero(state.last)
    missing = set(played.tolist()) - state.names.keys()
    if missing:
        state.names.update(names_of(raw, ph, missing))
    names = state.names
    ordered = sorted(played.tolist(), key=names.__getitem__)
    write = write_players_pg if ph == "%s" else write_players_sqlite
    chunk = chunk or PLAYER_CHUNK
    for start in range(0, len(ordered), chunk):
        keys = ordered[start : start + chunk]
        ids = [names[k] for k in keys]
        ratings = dict(zip(ids, state.ratings[keys].tolist(), strict=True))
        games = dict(zip(ids, state.games[keys].tolist(), strict=True))
        last_seq = dict(zip(ids, state.last[keys].tolist(), strict=True))
        stored = {names[k] for k in keys if k in known}
        write(raw, version_id, ratings, games, last_seq, stored)
    recount(raw, version_id)  # after the roll back and the rows above: the version's counts again


def _standings(changes: Int64Array) -> Int64Array:
    """Rows ``(seq, key, before, rank)``: ``rank`` counts the player's earlier changes in ``changes``."""
    ordered = changes[np.lexsort((changes[:, 0], changes[:, 1]))]
    keys = ordered[:, 1]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    rank = np.arange(len(ordered)) - np.repeat(starts, np.diff(np.r_[starts, len(ordered)]))
    return np.column_stack([ordered[:, 0], keys, ordered[:, 2], rank])


def standings_table(plan: Rebuild, changes: Int64Array) -> Callable[[list[int]], Standings]:
    """The standings before the matches of ``changes``, a version's changes ``(seq, key, before,
    after)`` from ``plan.start`` on (before or after the rebuild), as :mod:`.answers` derives them.

    Each player's rating before a match is its change's ``before``; the games before it are the
    player's changes before ``plan.start`` plus its earlier ones in ``changes``: what the stored
    rows say, without the ``count(*)`` per player per match of :func:`.answers.derive_answers`.
    """
    ranked = _standings(changes)
    ranked[:, 3] += plan.earlier[ranked[:, 1]]
    rows = ranked[np.argsort(ranked[:, 0], kind="stable")]
    seqs = rows[:, 0]
    names = plan.state.names

    def of(sequences: list[int]) -> Standings:
        wanted = np.asarray(sorted(sequences), dtype=np.int64)
        lows, highs = np.searchsorted(seqs, wanted, "left"), np.searchsorted(seqs, wanted, "right")
        picked = rows[np.concatenate([np.arange(lo, hi) for lo, hi in zip(lows, highs, strict=True)])]
        if missing := set(picked[:, 1].tolist()) - names.keys():
            names.update(names_of(plan.raw, plan.ph, missing))
        out: Standings = {int(seq): ({}, {}) for seq in wanted.tolist()}
        for seq, key, before, games in picked.tolist():
            pid = names[key]
            out[seq][0][pid] = before
            out[seq][1][pid] = games
        return out

    return of


def changed_sequences(old: Int64Array, new: Int64Array) -> set[int]:
    """The sequences of ``old``'s changes whose player standing differs in ``new``.

    Both are a version's changes ``(seq, key, before, after)`` from one sequence on, before and
    after a rebuild; the changes before that sequence are the same in both. A match's answer is a
    function of its players' ratings before it and games played before it (their earlier
    changes), so a match whose players all have the same rating before it and the same number of
    changes before it in both derives the same answer.
    """
    a, b = _standings(old), _standings(new)
    dtype = np.dtype([(f"f{i}", np.int64) for i in range(4)])
    found = np.isin(np.ascontiguousarray(a).view(dtype).ravel(), np.ascontiguousarray(b).view(dtype).ravel())
    return set(a[~found, 0].tolist())
