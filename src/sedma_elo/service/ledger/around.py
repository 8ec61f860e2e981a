"""A player's rank with neighbours (``GET /v1/leaderboard/around/{id}``) in one statement.

The rank is the version's counts of the higher ratings (:mod:`.counts`) plus the player's ties
before them by id. Each side's neighbours are two exact ranges of the rank index, the ties first:
with one ``OR`` of both (``rating > r OR (rating = r AND player_id < id)``) both databases read
the version's index from an end (462 ms at 1 M players), and with a bound on the rating they
still read every tie (6,632 at one rating of the 10 M league). The five parts travel in one
statement, so a read is one round trip (it was seven statements on a pooled connection).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import NotFoundError
from .counts import rank_above
from .types import LeaderboardPage

__all__ = ["AROUND_SQL", "around_page", "around_params"]

_COLS = "p.player_id, p.rating, p.matches_played"
# The rating as a scalar subquery, not a join with ``me``: joined, PostgreSQL sorted every player
# on the side before the LIMIT (202 ms a read at 1 M players); a scalar is one value, and the
# part an ordered range of the index that stops at the LIMIT.
_R = "(SELECT rating FROM me)"
_MINE = "FROM player_ratings p WHERE p.version_id = ?"


def _part(n: int, where: str, order: str) -> str:
    """Part ``n``: up to ``?`` players of the version where ``where``, nearest first by ``order``."""
    return (
        f"SELECT {n} AS part, * FROM (SELECT {_COLS}, 0 AS rank {_MINE} AND {where}"
        f" ORDER BY {order} LIMIT ?) AS s{n}"
    )


#: Parameters (``?``): see :func:`around_params`. Rows: (part, player id, rating, matches played,
#: rank); part 0 is the player (with the rank), 1 and 2 the ties and the higher ratings above,
#: 3 and 4 the ties and the lower ratings below, each part nearest first in its own order.
AROUND_SQL = " UNION ALL ".join(
    [
        "WITH me AS (SELECT rating, matches_played FROM player_ratings WHERE version_id = ?"
        " AND player_id = ?)"
        f" SELECT 0 AS part, NULL, me.rating, me.matches_played, {rank_above('me.rating')} + 1 FROM me",
        _part(1, f"p.rating = {_R} AND p.player_id < ?", "p.player_id DESC"),
        _part(2, f"p.rating > {_R}", "p.rating, p.player_id DESC"),
        _part(3, f"p.rating = {_R} AND p.player_id > ?", "p.player_id"),
        _part(4, f"p.rating < {_R}", "p.rating DESC, p.player_id"),
    ]
)


def around_params(version_id: int, player_id: str, span: int) -> tuple[object, ...]:
    """The parameters of :data:`AROUND_SQL` for ``player_id`` in ``version_id`` (span 0..100)."""
    v, p = version_id, player_id
    return (v, p, v, v, p, v, p, span, v, span, v, p, span, v, span)


def around_page(rows: Sequence[Any], player_id: str, span: int, version_id: int) -> LeaderboardPage:
    """The page of :data:`AROUND_SQL`'s rows: up to ``span`` players above and below, ranked.

    Raises:
        NotFoundError: the player has no rating in the version (no part 0 row).
    """
    parts: dict[int, list[Any]] = {n: [] for n in range(5)}
    for row in rows:
        parts[int(row[0])].append(row[1:])
    if not parts[0]:
        raise NotFoundError(f"player {player_id!r} has no rated match")
    # UNION ALL keeps no order across its parts: each part is put back in its own (ids compare
    # by code point, as the C collation and SQLite's binary one do).
    above = sorted(parts[1], key=lambda r: r[0], reverse=True)
    higher = sorted(sorted(parts[2], key=lambda r: r[0], reverse=True), key=lambda r: r[1])
    above += higher[: span - len(above)]
    below = sorted(parts[3], key=lambda r: r[0])
    below += sorted(parts[4], key=lambda r: (-r[1], r[0]))[: span - len(below)]
    me = (player_id, *parts[0][0][1:])
    ordered = [*reversed(above), me, *below]
    start = int(me[3]) - len(above)
    items = [
        {"rank": start + n, "player_id": r[0], "rating": r[1], "matches_played": r[2]}
        for n, r in enumerate(ordered)
    ]
    return LeaderboardPage(items, None, version_id)
