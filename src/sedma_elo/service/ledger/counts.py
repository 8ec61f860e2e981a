"""How many players of a version have each rating (``rating_counts``), and a rank read from it.

A player's rank is one plus the players above: the sum of the counts of the higher ratings plus
the players of the same rating with a smaller id (a short range of the rank index). Counting the
players above one by one read ~735,000 index entries for a mid-table player of a 1,000,000-player
version, 157-185 ms (docs/service.md).

Every path that writes ``player_ratings`` keeps the counts exact in the same transaction:

* the batch writers (:func:`move_counts`): each player of the batch leaves its old rating (if it
  had a row) and joins its new one; the deltas are summed by rating and written by one statement,
  in rating order, so that two writers never wait on each other's rows in opposite orders;
* the bulk paths (import, re-rate, activate, void: :func:`recount`, called by
  :func:`~.rebuild.store_players`): the version's counts again from one ``GROUP BY``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .pg_arrays import Int4Array

__all__ = ["move_counts", "rank_above", "rating_moves", "recount"]


def rank_above(rating: str) -> str:
    """The SQL expression of how many players of a version rank above ``(rating, player_id)``:
    the counts of the higher ratings plus the ties before the player by id.

    ``rating`` is SQL text (a column, say); the expression's parameters (``?``) are the version,
    the version again and the player id.
    """
    return (
        "(SELECT coalesce(sum(c.players), 0) FROM rating_counts c"
        f" WHERE c.version_id = ? AND c.rating > {rating})"
        f" + (SELECT count(*) FROM player_ratings t WHERE t.version_id = ? AND t.rating = {rating}"
        " AND t.player_id < ?)"
    )


_PG_MOVE = (
    "INSERT INTO rating_counts AS c (version_id, rating, players)"
    " SELECT %s, u.rating, u.delta FROM unnest(CAST(%b AS integer[]), CAST(%b AS integer[]))"
    " AS u(rating, delta) ORDER BY u.rating"
    " ON CONFLICT (version_id, rating) DO UPDATE SET players = c.players + excluded.players"
)
_SQLITE_MOVE = (
    "INSERT INTO rating_counts (version_id, rating, players) VALUES (?, ?, ?)"
    " ON CONFLICT (version_id, rating) DO UPDATE SET players = players + excluded.players"
)


def rating_moves(
    changes: Iterable[tuple[int, str, int, int]], ratings: Mapping[str, int], known: set[str]
) -> dict[int, int]:
    """The non-zero change of each rating's count after a batch, by rating.

    ``changes`` are the batch's ``(sequence, player, before, after)`` in sequence order: a player's
    first one says its rating before the batch; ``ratings`` holds every player's rating after it;
    a player not in ``known`` had no row before (it only joins its rating).
    """
    first: dict[str, int] = {}
    for _, pid, before, _ in changes:
        first.setdefault(pid, before)
    delta: dict[int, int] = {}
    for pid, before in first.items():
        after = ratings[pid]
        if pid in known:
            if before == after:
                continue
            delta[before] = delta.get(before, 0) - 1
        delta[after] = delta.get(after, 0) + 1
    return {r: d for r, d in delta.items() if d}


def move_counts(raw: Any, pg: bool, version_id: int, moves: Mapping[int, int]) -> None:
    """Add ``moves`` (rating -> change of its count) to the version's counts, in rating order."""
    if not moves:
        return
    ordered = sorted(moves)
    if pg:
        raw.execute(_PG_MOVE, (version_id, Int4Array(ordered), Int4Array(moves[r] for r in ordered)))
    else:
        raw.executemany(_SQLITE_MOVE, [(version_id, r, moves[r]) for r in ordered])


def recount(raw: Any, version_id: int) -> None:
    """The version's counts again from its player rows (one ``GROUP BY``)."""
    vid = int(version_id)
    cur = raw.cursor()
    try:
        cur.execute(f"DELETE FROM rating_counts WHERE version_id = {vid}")
        cur.execute(
            "INSERT INTO rating_counts (version_id, rating, players)"
            f" SELECT {vid}, rating, count(*) FROM player_ratings WHERE version_id = {vid} GROUP BY rating"
        )
    finally:
        cur.close()
