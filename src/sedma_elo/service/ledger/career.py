"""A player page's reads that do not grow with the career: one page of matches, the summary, the chart.

A 10,000-match career read whole (:meth:`ReadsMixin.player_career`, ten joins a match) cost the
player page most of its time (docs/service.md). Here each part of the page asks for what it shows:

* :meth:`CareerMixin.career_page`: one keyset page of matches by ``sequence`` (the career statement
  bounded and limited, so it reads ``limit + 1`` matches however long the career);
* :meth:`CareerMixin.career_summary`: record, streaks, peak, best win and head-to-head folded over
  the (version, player, sequence) key (integers only; the two matches named, peak and best win,
  are then read by sequence), from a stored state of the older matches when there is one
  (:mod:`.career_state`);
* :meth:`CareerMixin.career_series`: the rating line read as one key range (three integers a
  match), thinned to at most ``points`` rows (:func:`keep_extremes`: each bucket's lowest and
  highest rating, and the first and last match), and only the kept rows read from their matches.

They run through :meth:`~sedma_elo.storage.Database.read_many`: on PostgreSQL their plans are kept
from one call to the next (docs/web.md, "A 10,000-match player's page on PostgreSQL").

The numbers are those :func:`sedma_elo.web.profile.career` computes from the whole career (the
tests compare the two).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from ...errors import NotFoundError, ValidationError
from .career_item import CareerItem
from .career_state import STORE_AFTER, STORE_SQL, CareerFold, Meetings
from .pg_arrays import Int8Array
from .reads import _CAREER_SQL, ReadsMixin, _career_item

__all__ = [
    "OPPONENTS",
    "OTHER_SIDE",
    "RESULT",
    "SIDE",
    "CareerMixin",
    "CareerSummary",
    "SeriesPoint",
    "keep_extremes",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_RESULTS = ("win", "loss", "draw")  # the codes 0, 1, 2 of the statements below

# A match seen from the player whose key is ``{me}``: their side (0: a, 1: b), their result code
# (0 win, 1 loss, 2 draw) and their opponents' keys (the second None unless a team match). Shared
# by a page read (one player, ``me.id``) and :mod:`.career_bulk` (every busy player, ``rc.player_key``).
SIDE = "CASE WHEN m.a1 = {me} OR m.a2 = {me} THEN 0 ELSE 1 END"
RESULT = "CASE WHEN m.winner = 2 THEN 2 WHEN m.winner = " + SIDE + " THEN 0 ELSE 1 END"
OPPONENTS = (
    "CASE WHEN m.a1 = {me} OR m.a2 = {me} THEN m.b1 ELSE m.a1 END AS o1,"
    " CASE WHEN m.a1 = {me} OR m.a2 = {me} THEN m.b2 ELSE m.a2 END AS o2"
)
# The other side's keys hold ``o.player_key`` (``o`` a change of the same match).
OTHER_SIDE = (
    "(CASE WHEN m.a1 = {me} OR m.a2 = {me} THEN o.player_key IN (m.b1, m.b2)"
    " ELSE o.player_key IN (m.a1, m.a2) END)"
)
# The player's matches after a sequence as (sequence, rating after, result code, the opponent
# keys, time).
_MINE = (
    "SELECT rc.sequence AS seq, rc.rating_after AS ra, "
    + RESULT.format(me="me.id")
    + " AS res, "
    + OPPONENTS.format(me="me.id")
    + ", m.played_at"
    " FROM players me JOIN rating_changes rc ON rc.version_id = {ph} AND rc.player_key = me.id"
    " JOIN matches m ON m.sequence = rc.sequence WHERE me.player_id = {ph} AND rc.sequence > {ph}"
    " ORDER BY rc.sequence"
)
# The first win after a sequence against the highest mean rating of the other side before the match.
# ``+m.sequence``: with a plain column SQLite 3.40 carried ``rc.sequence > ?`` over to ``o`` and
# searched its sequence index by that range instead of the equality, reading every later change
# for each win (186 ms against 0.04 ms for a 27-match player of 100,000; docs/web.md).
_BEST_WIN = (
    "SELECT rc.sequence, avg(o.rating_before) AS opp FROM players me"
    " JOIN rating_changes rc ON rc.version_id = {ph} AND rc.player_key = me.id"
    " JOIN matches m ON m.sequence = rc.sequence"
    " JOIN rating_changes o ON o.version_id = rc.version_id AND o.sequence = +m.sequence AND "
    + OTHER_SIDE.format(me="me.id")
    + " WHERE me.player_id = {ph} AND rc.sequence > {ph} AND m.winner = "
    + SIDE.format(me="me.id")
    + " GROUP BY rc.sequence ORDER BY opp DESC, rc.sequence LIMIT 1"
)
# The player's key, and the stored state of the career if it is valid (made under the version's
# current count of rewrites).
_STATE = (
    "SELECT p.id, s.state FROM players p LEFT JOIN career_states s ON s.version_id = {ph}"
    " AND s.player_key = p.id AND s.rewrites = {ph} WHERE p.player_id = {ph}"
)
_REWRITES = "SELECT rewrites FROM rating_versions WHERE id = {ph}"
# The rating line: every match's sequence and ratings (one range of the primary key, no join).
# The player's key as a scalar subquery: the range is then read in key order. Joined to players,
# PostgreSQL sorted the 10,000 rows again (a third of the statement's time).
_SERIES = (
    "SELECT sequence, rating_before, rating_after FROM rating_changes WHERE version_id = {ph}"
    " AND player_key = (SELECT id FROM players WHERE player_id = {ph}) ORDER BY sequence"
)
_SERIES_MATCHES = "SELECT sequence, played_at, match_id FROM matches"
# Where a range of the last {days} days starts: the last match's time, then the first match at or
# after the start and whether any match has no time (then the range is the whole career).
_LAST_AT = (
    "SELECT m.played_at FROM players me JOIN rating_changes rc ON rc.version_id = {ph}"
    " AND rc.player_key = me.id JOIN matches m ON m.sequence = rc.sequence WHERE me.player_id = {ph}"
    " ORDER BY rc.sequence DESC LIMIT 1"
)
_RANGE_START = (
    "SELECT min(CASE WHEN m.played_at >= {ph} THEN rc.sequence END), count(*) - count(m.played_at)"
    " FROM players me JOIN rating_changes rc ON rc.version_id = {ph} AND rc.player_key = me.id"
    " JOIN matches m ON m.sequence = rc.sequence WHERE me.player_id = {ph}"
)
# One page of the career statement: the page's keys picked first (a bounded range of the primary
# key), then only they joined to their matches, players and ratings. With the bound and LIMIT on the
# whole statement PostgreSQL joined all 10,000 matches and sorted them (docs/service.md); the
# player's key is a scalar subquery so that the range is read in order up to the limit (as in
# ``history_sql``).
_FROM_ME = " FROM players me JOIN rating_changes rc ON rc.version_id = {ph} AND rc.player_key = me.id"
_HEAD, _TAIL = _CAREER_SQL.split(_FROM_ME)
_TAIL = _TAIL.removesuffix(" WHERE me.player_id = {ph} ORDER BY rc.sequence")
_PAGE = (
    _HEAD + " FROM (SELECT r.version_id, r.sequence, r.rating_before, r.rating_after FROM rating_changes r"
    " WHERE r.version_id = {ph} AND r.player_key = (SELECT id FROM players WHERE player_id = {ph})"
    "{bound} ORDER BY r.sequence {order} LIMIT {limit}) rc" + _TAIL + " ORDER BY rc.sequence {order}"
)
_COUNT = (
    "SELECT count(*) FROM players me JOIN rating_changes rc ON rc.version_id = {ph} AND rc.player_key = me.id"
    " WHERE me.player_id = {ph} AND rc.sequence {op} {ph}"
)


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    """A kept point of the rating line: after match ``number`` of the career, ``rating_after``."""

    number: int
    sequence: int
    rating_before: int
    rating_after: int
    played_at: datetime | None
    match_id: str


@dataclass(slots=True)
class CareerSummary:
    """A career's numbers; ``peak`` and ``best_win`` are ``None`` without matches (or wins).

    ``head_to_head`` is (opponent, wins, draws, losses), most played first, then by id.
    """

    player_id: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    peak: CareerItem | None = None
    streak_result: str | None = None
    streak: int = 0
    best_win_streak: int = 0
    best_win: CareerItem | None = None
    head_to_head: list[tuple[str, int, int, int]] = field(default_factory=list)
    first_played: datetime | None = None  # the time of the first and the last match
    last_played: datetime | None = None


class CareerMixin(ReadsMixin):
    """Bounded reads of one player's career in the active version (see the module docstring)."""

    def career_page(
        self, player_id: str, limit: int = 25, *, before: int | None = None, after: int | None = None
    ) -> tuple[list[CareerItem], bool, int]:
        """Up to ``limit`` (1..500) matches newest first: the newest, those just older than sequence
        ``before``, or the oldest ones newer than ``after``; with whether older matches exist and how
        many are newer than the newest shown (the page's number is ``newer // limit + 1``).

        Each is one bounded range of the (version, player, sequence) key: ``limit + 1`` matches read
        however long the career, plus a count of the newer keys (no match rows).

        Raises:
            ValidationError: both ``before`` and ``after``, or ``limit`` outside 1..500.
        """
        if before is not None and after is not None:
            raise ValidationError("before", "give either before or after, not both")
        if not 1 <= limit <= 500:
            raise ValidationError("limit", "must be within [1, 500]")
        return self.db.read_many(lambda conn: self._page(conn, player_id, limit, before, after))

    def _page(
        self, conn: Connection, player_id: str, limit: int, before: int | None, after: int | None
    ) -> tuple[list[CareerItem], bool, int]:
        ph = self._ph
        vid = self._active_id(conn)
        if after is None:
            bound = "" if before is None else f" AND r.sequence < {ph}"
            sql = _PAGE.format(ph=ph, bound=bound, order="DESC", limit=limit + 1)
            params: tuple[Any, ...] = (vid, player_id) if before is None else (vid, player_id, before)
            rows = conn.exec_driver_sql(sql, params).all()
            items = [_career_item(r) for r in rows[:limit]]
            older = len(rows) > limit
        else:
            sql = _PAGE.format(ph=ph, bound=f" AND r.sequence > {ph}", order="ASC", limit=limit)
            items = [_career_item(r) for r in conn.exec_driver_sql(sql, (vid, player_id, after))][::-1]
            older = self._count(conn, vid, player_id, "<=", after) > 0
        newer = 0
        if items and (before is not None or after is not None):
            newer = self._count(conn, vid, player_id, ">", items[0].sequence)
        return items, older, newer

    def career_summary(self, player_id: str, head_to_head: int = 8) -> CareerSummary:
        """Record, current and longest winning streak, peak, best win and the ``head_to_head`` most
        played opponents of the player (all zero / ``None`` / empty without matches).

        A fold over the career (:class:`~.career_state.CareerFold`): the stored state of the
        player's matches through some sequence, if one is valid, extended by the newer matches
        only (one narrow statement, five integers a match, and one aggregate over the newer wins
        for the best win). When the read folded :data:`~.career_state.STORE_AFTER` matches or
        more, it stores the state for the next read (skipped if the database is busy writing).
        """
        out, store = self.db.read_many(lambda conn: self._summary(conn, player_id, head_to_head))
        if store is not None:
            self._store_state(*store)
        return out

    def _summary(
        self, conn: Connection, player_id: str, head_to_head: int
    ) -> tuple[CareerSummary, tuple[int, int, int, CareerFold] | None]:
        """The summary, and the arguments of :meth:`_store_state` if its fold is worth storing."""
        out = CareerSummary(player_id)
        vid = self._active_id(conn)
        rewrites = self._rewrites(conn, vid)
        folded = self._fold(conn, vid, rewrites, player_id)
        if folded is None:
            return out, None
        key, fold, added = folded
        _summary_of(out, fold)
        assert fold.peak is not None
        out.peak = self._item(conn, vid, player_id, fold.peak[0])
        out.head_to_head = _top_meetings(conn, self._ph, fold.meetings, head_to_head)
        out.best_win = None if fold.best is None else self._item(conn, vid, player_id, fold.best[0])
        return out, ((vid, key, rewrites, fold) if added >= STORE_AFTER else None)

    def _rewrites(self, conn: Connection, vid: int) -> int:
        """The version's count of rewrites (voids): a stored state made under another is stale."""
        return int(conn.exec_driver_sql(_REWRITES.format(ph=self._ph), (vid,)).scalar_one())

    def _fold(
        self, conn: Connection, vid: int, rewrites: int, player_id: str
    ) -> tuple[int, CareerFold, int] | None:
        """The player's key, the fold of the whole career (the stored state, if valid, extended by
        the newer matches) and how many matches were folded here; None for an unknown player or
        one without matches in version ``vid``."""
        ph = self._ph
        found = conn.exec_driver_sql(_STATE.format(ph=ph), (vid, rewrites, player_id)).first()
        if found is None:
            return None
        fold = CareerFold() if found[1] is None else CareerFold.from_text(found[1])
        since = fold.through
        added = fold.add(_fetch(conn, _MINE.format(ph=ph), (vid, player_id, since)))
        if fold.played == 0:
            return None
        win = conn.exec_driver_sql(_BEST_WIN.format(ph=ph), (vid, player_id, since)).first()
        if win is not None:
            fold.offer_best(int(win[0]), round(2 * win[1]))
        return int(found[0]), fold, added

    def _store_state(
        self, vid: int, key: int, rewrites: int, fold: CareerFold, *, wait: bool = False
    ) -> None:
        """Store a career's state unless a newer one is stored; unless ``wait``, skipped when the
        database is busy (a page read's store is a cache: a later read stores it)."""
        sql = STORE_SQL.format(ph=self._ph)
        params = (vid, key, fold.through, rewrites, fold.to_text())
        if wait:
            with self.db.begin_write() as conn:
                conn.exec_driver_sql(sql, params)
            return
        try:
            with self.db.try_write() as conn:
                if conn is not None:
                    conn.exec_driver_sql(sql, params)
        except DBAPIError:
            pass  # a lock not granted at once (PostgreSQL) leaves it for a later read

    def career_series(self, player_id: str, points: int = 400, days: int | None = None) -> list[SeriesPoint]:
        """The rating after each match, oldest first, thinned to at most ``points`` (>= 4) rows.

        With ``days``, only the matches from the first one at most ``days`` days before the last
        match (the whole career when a match has no time). More than ``points`` matches are split
        into ``(points - 2) // 2`` buckets in order (:func:`keep_extremes`); each keeps its first
        lowest and first highest rating, and the first and last match are always kept. Only the
        kept matches are read from the matches table.
        """
        return self.db.read_many(lambda conn: self._series(conn, player_id, points, days))

    def _series(self, conn: Connection, player_id: str, points: int, days: int | None) -> list[SeriesPoint]:
        ph = self._ph
        vid = self._active_id(conn)
        start = 0 if days is None else self._range_start(conn, vid, player_id, days)
        rows = _fetch(conn, _SERIES.format(ph=ph), (vid, player_id))
        first = next((i for i, r in enumerate(rows) if r[0] >= start), len(rows))
        kept = [first + i for i in keep_extremes([r[2] for r in rows[first:]], points)]
        seqs = [rows[i][0] for i in kept]
        found = {r[0]: r for r in _rows_by_keys(conn, ph, _SERIES_MATCHES, "sequence", seqs)}
        return [
            SeriesPoint(
                i + 1,
                rows[i][0],
                rows[i][1],
                rows[i][2],
                from_micros_dt(found[rows[i][0]][1]),
                found[rows[i][0]][2],
            )
            for i in kept
        ]

    def _range_start(self, conn: Connection, vid: int, player_id: str, days: int) -> int:
        """The first sequence of the last ``days`` days of the career (0: the whole career)."""
        ph = self._ph
        last = conn.exec_driver_sql(_LAST_AT.format(ph=ph), (vid, player_id)).scalar()
        if last is None:
            return 0
        since = last - days * 86_400_000_000
        first, undated = conn.exec_driver_sql(_RANGE_START.format(ph=ph), (since, vid, player_id)).one()
        return 0 if undated or first is None else int(first)

    def _count(self, conn: Connection, vid: int, player_id: str, op: str, sequence: int) -> int:
        """How many of the player's matches have a sequence ``op`` (``<=``, ``>``) ``sequence``."""
        sql = _COUNT.format(ph=self._ph, op=op)
        return int(conn.exec_driver_sql(sql, (vid, player_id, sequence)).scalar_one())

    def _item(self, conn: Connection, vid: int, player_id: str, sequence: int) -> CareerItem:
        """One match of the career by its sequence."""
        sql = _CAREER_SQL.format(ph=self._ph).replace(
            " ORDER BY rc.sequence", f" AND rc.sequence = {self._ph}"
        )
        row = conn.exec_driver_sql(sql, (vid, player_id, sequence)).first()
        if row is None:
            raise NotFoundError(f"player {player_id!r} has no match {sequence}")
        return _career_item(row)


def from_micros_dt(micros: int | None) -> datetime | None:
    """A stored time (microseconds since 1970 UTC) as an aware datetime."""
    return None if micros is None else _EPOCH + timedelta(microseconds=micros)


def keep_extremes(values: Sequence[int], limit: int) -> list[int]:
    """The indices kept when ``values`` is thinned to at most ``limit`` (>= 4), ascending.

    All of them up to ``limit``; else the first, the last, and in each of ``(limit - 2) // 2``
    equal buckets of the rest the first lowest and the first highest value, so peaks and dips stay.
    """
    if len(values) <= limit:
        return list(range(len(values)))
    buckets = max(1, (limit - 2) // 2)
    inner = len(values) - 2
    size = inner / buckets
    kept = [0]
    for b in range(buckets):
        lo_i, hi_i = 1 + int(b * size), 1 + int((b + 1) * size)
        if lo_i >= hi_i:
            continue
        chunk = range(lo_i, hi_i)
        low = min(chunk, key=values.__getitem__)
        high = max(chunk, key=values.__getitem__)
        kept.extend(sorted({low, high}))
    kept.append(len(values) - 1)
    return kept


def _fetch(conn: Connection, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """All rows of a statement as the driver's tuples (no SQLAlchemy row a match)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    cursor = raw.cursor()
    try:
        cursor.execute(sql, params)
        return list(cursor.fetchall())
    finally:
        cursor.close()


def _rows_by_keys(
    conn: Connection, ph: str, select: str, column: str, keys: list[int]
) -> list[tuple[Any, ...]]:
    """The rows of ``select`` whose ``column`` is one of ``keys``: on PostgreSQL in one statement
    with one array (its plan kept by :meth:`Database.read_many`, where a list of markers made a
    statement of each length), on SQLite in lists of at most 500 (its bound on parameters)."""
    if ph == "%s":
        return _fetch(conn, f"{select} WHERE {column} = ANY(%s)", (Int8Array(keys),))
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(keys), 500):
        part = keys[start : start + 500]
        sql = f"{select} WHERE {column} IN ({', '.join([ph] * len(part))})"
        rows.extend(tuple(r) for r in conn.exec_driver_sql(sql, tuple(part)))
    return rows


def _summary_of(out: CareerSummary, fold: CareerFold) -> None:
    """Fill the record, streaks and times of ``out`` from a fold of the whole career."""
    out.wins, out.losses, out.draws = fold.counts
    out.best_win_streak = fold.best_win_streak
    out.streak_result, out.streak = _RESULTS[fold.last], fold.streak
    out.first_played, out.last_played = from_micros_dt(fold.first_at), from_micros_dt(fold.last_at)


def _top_meetings(conn: Connection, ph: str, meetings: Meetings, top: int) -> list[tuple[str, int, int, int]]:
    """The ``top`` most met opponents, most played first then by id, named by one lookup
    (:func:`_rows_by_keys`)."""
    keys, counts = meetings.most_played(top)  # ties with the last kept, named below
    if not keys.size:
        return []
    met = {int(k): (int(w), int(d), int(lost)) for k, (w, d, lost) in zip(keys, counts, strict=True)}
    rows = _rows_by_keys(conn, ph, "SELECT id, player_id FROM players", "id", list(met))
    names = {int(k): str(n) for k, n in rows}
    ranked = sorted(met, key=lambda k: (-sum(met[k]), names[k]))[:top]
    return [(names[k], *met[k]) for k in ranked]
