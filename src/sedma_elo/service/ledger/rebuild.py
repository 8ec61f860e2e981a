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

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .bulk import Int64Array, KeyState, names_of, query_int64, rate_chunk, read_chunks, use_kernel
from .types import VersionInfo
from .write_pg import write_players_pg
from .write_sqlite import write_players_sqlite

__all__ = ["Rebuild", "changed_sequences", "store_players"]

#: ``progress(done, total)``: matches rebuilt so far of those to rebuild.
Progress = Callable[[int, int], None]


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
        for key, _, before, count, _ in self.touched:
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

    def rate(self, progress: Progress | None = None) -> Iterator[Int64Array]:
        """Rate the ledger from ``start`` chunk by chunk: each chunk's changes ``(seq, key, before, after)``.

        Raises:
            ValidationError: the rules refuse a match (as the fold would).
        """
        kernel = use_kernel(self.total)
        placeholders = [""] * len(self.state.ratings)
        done = 0
        for _, _, rows in read_chunks(self.raw, self.pg, self.start, self.end):
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


def store_players(raw: Any, ph: str, version_id: int, state: KeyState, known: set[int]) -> None:
    """Store the rating, count and last sequence of every key with a last sequence in ``state``
    (the ones in ``known``, which have a row in ``version_id``, updated; the others inserted)."""
    played = np.flatnonzero(state.last)
    missing = set(played.tolist()) - state.names.keys()
    if missing:
        state.names.update(names_of(raw, ph, missing))
    names = state.names
    ids = [names[k] for k in played.tolist()]
    ratings = dict(zip(ids, state.ratings[played].tolist(), strict=True))
    games = dict(zip(ids, state.games[played].tolist(), strict=True))
    last_seq = dict(zip(ids, state.last[played].tolist(), strict=True))
    stored = {names[k] for k in known if state.last[k]}
    write = write_players_pg if ph == "%s" else write_players_sqlite
    write(raw, version_id, ratings, games, last_seq, stored)


def _standings(changes: Int64Array) -> Int64Array:
    """Rows ``(seq, key, before, rank)``: ``rank`` counts the player's earlier changes in ``changes``."""
    ordered = changes[np.lexsort((changes[:, 0], changes[:, 1]))]
    keys = ordered[:, 1]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    rank = np.arange(len(ordered)) - np.repeat(starts, np.diff(np.r_[starts, len(ordered)]))
    return np.column_stack([ordered[:, 0], keys, ordered[:, 2], rank])


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
