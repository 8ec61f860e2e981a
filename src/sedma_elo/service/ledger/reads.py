"""Reading the ledger: players, histories, the leaderboard, one match explained, the whole ledger.

The hot reads (a player, a leaderboard page, a prefix search) go through
:meth:`Database.query <sedma_elo.storage.database.Database.query>` or the awaitable
:attr:`LedgerBase.reader`; the rest through SQLAlchemy Core. Every read sees committed data only.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select

from ...core.fold import RatingState
from ...core.ids import check_id_prefix
from ...core.model import Match
from ...errors import NotFoundError, ValidationError
from ...storage.schema import matches, player_ratings
from .answers import standing_before
from .around import AROUND_SQL, around_page, around_params
from .base import LedgerBase
from .career_item import CareerItem
from .coalesce import Coalescer
from .cursors import encode_cursor, history_bound, history_cursor, leaderboard_key
from .rows import MATCH_COLUMNS, MATCH_FROM, WINNER_CODES, from_micros, match_of, submission_of
from .sql import LEADERBOARD_AFTER, LEADERBOARD_FIRST, PLAYER_SQL, PLAYERS_SQL, SEARCH_SQL, history_sql
from .types import MAX_PAGE, MAX_RECENT, HistoryOrder, HistoryPage, LeaderboardPage, PlayerRecord
from .views import match_view

__all__ = ["CareerItem", "ReadsMixin"]  # CareerItem: see career_item.py

_WINNER_OF = {code: name for name, code in WINNER_CODES.items()}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# One range of the (version, player, sequence) primary key of rating_changes, each match and its
# players fetched by primary key, and the other players' ratings before it by the same key: one
# statement however long the career (the pages asked for 2 x 20 statements at 10,000 matches).
# The slots' ratings join on m.sequence, not rc.sequence: with rc.sequence PostgreSQL 15 probed
# the (version, sequence) index and filtered the player (250,000 buffer hits for a 10,000-match
# career); with m.sequence it takes the primary key (170,000).
_CAREER_SQL = (
    "SELECT rc.sequence, m.match_id, m.played_at, rc.rating_before, rc.rating_after, m.winner,"
    " pa1.player_id, pa2.player_id, pb1.player_id, pb2.player_id,"
    " ca1.rating_before, ca2.rating_before, cb1.rating_before, cb2.rating_before"
    " FROM players me JOIN rating_changes rc ON rc.version_id = {ph} AND rc.player_key = me.id"
    " JOIN matches m ON m.sequence = rc.sequence"
    " JOIN players pa1 ON pa1.id = m.a1 LEFT JOIN players pa2 ON pa2.id = m.a2"
    " JOIN players pb1 ON pb1.id = m.b1 LEFT JOIN players pb2 ON pb2.id = m.b2"
    + "".join(
        f" LEFT JOIN rating_changes c{slot} ON c{slot}.version_id = rc.version_id"
        f" AND c{slot}.player_key = m.{slot} AND c{slot}.sequence = m.sequence"
        for slot in ("a1", "a2", "b1", "b2")
    )
    + " WHERE me.player_id = {ph} ORDER BY rc.sequence"
)

# PostgreSQL: the slots' ratings before come from one index-only probe a match of the sequence
# index (it includes player_key, migration 0007) instead of a primary-key probe a slot, and the
# slots stay keys, named afterwards by one lookup of the distinct keys (_NAMES_SQL). A 10,174-match
# career in a 1,000,000-match ledger: 71,000 buffers instead of 196,000 (docs/service.md).
_CAREER_SQL_PG = (
    "SELECT rc.sequence, m.match_id, m.played_at, rc.rating_before, rc.rating_after, m.winner,"
    " m.a1, m.a2, m.b1, m.b2, o.a1, o.a2, o.b1, o.b2"
    " FROM players me JOIN rating_changes rc ON rc.version_id = %s AND rc.player_key = me.id"
    " JOIN matches m ON m.sequence = rc.sequence"
    " CROSS JOIN LATERAL (SELECT "
    + ", ".join(
        f"max(c.rating_before) FILTER (WHERE c.player_key = m.{slot}) AS {slot}"
        for slot in ("a1", "a2", "b1", "b2")
    )
    + " FROM rating_changes c WHERE c.version_id = rc.version_id AND c.sequence = m.sequence) o"
    " WHERE me.player_id = %s ORDER BY rc.sequence"
)
_NAMES_SQL = "SELECT id, player_id FROM players WHERE id = ANY(%s)"


class ReadsMixin(LedgerBase):
    """The ledger's read side."""

    #: The JSON answer for one match (see :func:`~sedma_elo.service.ledger.views.match_view`).
    match_view = staticmethod(match_view)
    #: PostgreSQL: the player lookups of the event loop, batched (made on first use, on that loop).
    _players_batch: Coalescer[tuple[int, str], tuple[Any, ...]] | None = None

    def get_player(self, player_id: str, version_id: int | None = None) -> PlayerRecord:
        """A player's rating in the active (or given) version.

        Raises:
            NotFoundError: the player has no match in that version.
        """
        vid = self.active_id() if version_id is None else version_id
        return _player_record(player_id, vid, self.db.query(PLAYER_SQL, (vid, player_id)))

    async def get_player_async(self, player_id: str, version_id: int | None = None) -> PlayerRecord:
        """:meth:`get_player` for an event loop: waits for PostgreSQL without blocking the loop.

        On PostgreSQL the players asked for while a lookup is out are read together by the next
        one (:class:`~.coalesce.Coalescer`): one round trip per batch, not per request.
        """
        vid = self.active_id() if version_id is None else version_id
        if not self._pg:  # SQLite runs the statement inline: nothing waits to be batched
            return _player_record(player_id, vid, self.db.query(PLAYER_SQL, (vid, player_id)))
        if self._players_batch is None:
            self._players_batch = Coalescer(self._players_async)
        row = await self._players_batch.get((vid, player_id))
        return _player_record(player_id, vid, [] if row is None else [row])

    async def _players_async(self, keys: list[tuple[int, str]]) -> dict[tuple[int, str], tuple[Any, ...]]:
        """The (rating, matches played, last sequence) of each (version, player) of ``keys`` that exists."""
        found: dict[tuple[int, str], tuple[Any, ...]] = {}
        for vid in {v for v, _ in keys}:
            ids = [pid for v, pid in keys if v == vid]
            for pid, *row in await self.reader.query(PLAYERS_SQL, (vid, ids)):
                found[vid, pid] = tuple(row)
        return found

    def player_history(
        self,
        player_id: str,
        limit: int = 50,
        cursor: str | None = None,
        order: HistoryOrder = "asc",
    ) -> HistoryPage:
        """The player's rating after each match, ``limit`` per page (1..500), keyset-paginated.

        ``order`` is ``"asc"`` (oldest first) or ``"desc"`` (newest first); either way a page costs
        one range read of the (version, player, sequence) index, however deep it is. A cursor only
        continues the order it was returned for.

        Raises:
            NotFoundError: the player has no match in the active version.
            ValidationError: bad ``limit``, ``order`` or ``cursor``.
        """
        bound = _history_bound(limit, order, cursor)
        with self.db.read.connect() as conn:
            vid = self._active_id(conn)
            exists = conn.execute(
                select(player_ratings.c.player_id).where(
                    player_ratings.c.version_id == vid, player_ratings.c.player_id == player_id
                )
            ).first()
            if exists is None:
                raise NotFoundError(f"player {player_id!r} has no rated match")
            params = _history_params(vid, player_id, bound, limit)
            rows = conn.exec_driver_sql(history_sql(order, bound is not None, self._ph), params).all()
        return _history_page(player_id, rows, limit, order)

    async def player_history_async(
        self,
        player_id: str,
        limit: int = 50,
        cursor: str | None = None,
        order: HistoryOrder = "asc",
    ) -> HistoryPage:
        """:meth:`player_history` for an event loop, in one statement when the page has rows.

        Through :attr:`reader` (PostgreSQL: the async pool, no thread, no pooled SQLAlchemy
        connection to reset) with the cached active version; only an empty page asks whether the
        player exists (unknown: 404; a cursor past the end: empty). The sync read takes a pooled
        connection and three statements (version, existence, page).

        Raises:
            NotFoundError: the player has no match in the active version.
            ValidationError: bad ``limit``, ``order`` or ``cursor``.
        """
        bound = _history_bound(limit, order, cursor)
        vid = self.active_id()
        params = _history_params(vid, player_id, bound, limit)
        rows = await self.reader.query(history_sql(order, bound is not None, "?"), params)
        if not rows and not await self.reader.query(PLAYER_SQL, (vid, player_id)):
            raise NotFoundError(f"player {player_id!r} has no rated match")
        return _history_page(player_id, rows, limit, order)

    def player_career(self, player_id: str) -> list[CareerItem]:
        """Every match of the player in the active version, oldest first, in one indexed statement.

        The items are those of :meth:`player_history` (same order, sequences, times and ratings)
        with each match's sides, winner and every player's rating before it: what a player page
        needs for the record, streaks, best win and head-to-head. Voided matches have no rating
        changes, so they are not in it.

        Raises:
            NotFoundError: the player has no match in the active version.
        """
        with self.db.read.connect() as conn:
            vid = self._active_id(conn)
            # SQLite: the driver's cursor, row by row (no list of 10,000 result rows alive at once);
            # PostgreSQL: the rows, then the names of their player keys (see _CAREER_SQL_PG).
            raw = conn.connection.driver_connection
            assert raw is not None
            if self._pg:
                items = _pg_career(raw, vid, player_id)
            else:
                cursor = raw.cursor()
                try:
                    cursor.execute(_CAREER_SQL.format(ph=self._ph), (vid, player_id))
                    items = [_career_item(r) for r in cursor]
                finally:
                    cursor.close()
        if not items:
            raise NotFoundError(f"player {player_id!r} has no rated match")
        return items

    def recent_changes(
        self, player_ids: Sequence[str], n: int = 10, version_id: int | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Each player's last ``n`` (1..100) rating changes, newest first, in one query.

        Reads the active (or given) version. The answer has a key for every distinct id asked for
        (at most 100); a player without a match in that version gets an empty list. Each item has
        the same fields as an item of :meth:`player_history`, and the items are exactly the first
        ``n`` of the player's newest-first history. One SELECT of one backward index range read per
        player (a ``UNION ALL`` on SQLite, a ``LATERAL`` join on PostgreSQL), so its cost does not
        grow with the length of anyone's history.

        Raises:
            ValidationError: ``n`` out of range, or more than 100 players.
        """
        if isinstance(n, bool) or not 1 <= n <= MAX_RECENT:
            raise ValidationError("n", f"must be within [1, {MAX_RECENT}]")
        wanted = list(dict.fromkeys(player_ids))
        if len(wanted) > MAX_RECENT:
            raise ValidationError("players", f"at most {MAX_RECENT} players at a time")
        out: dict[str, list[dict[str, Any]]] = {pid: [] for pid in wanted}
        if not wanted:
            return out
        vid = self.active_id() if version_id is None else version_id
        params: tuple[Any, ...]
        if self._pg:
            # One plan for any number of players (planning 50 UNION ALL branches took longer than
            # running them): the same per-player query, joined laterally to the list of ids.
            branch = history_sql("desc", False, self._ph, player="p.id")
            sql = f"SELECT r.* FROM unnest(%s::text[]) AS p(id) CROSS JOIN LATERAL ({branch}) AS r"
            params = (wanted, vid, n)
        else:
            branch = history_sql("desc", False, self._ph)
            sql = " UNION ALL ".join(f"SELECT * FROM ({branch}) AS r{i}" for i in range(len(wanted)))
            params = tuple(p for pid in wanted for p in (vid, pid, n))
        rows = self.db.read_many(lambda conn: conn.exec_driver_sql(sql, params).all())
        for r in rows:
            out[r.player_id].append(_history_item(r))
        for items in out.values():
            # UNION ALL keeps no order across branches' subqueries on every database: restore it.
            items.sort(key=lambda item: item["sequence"], reverse=True)
        return out

    def search_players(self, prefix: str, limit: int = 20) -> list[dict[str, Any]]:
        """Players of the active version whose id starts with ``prefix``, by id, at most ``limit`` (1..100).

        One range read of the ``(version_id, player_id)`` primary key: ids from ``prefix`` up to
        ``prefix`` followed by the highest code point. Exact because ids compare by code point on
        both databases (migration 0002 gives the PostgreSQL id columns ``COLLATE "C"``, whatever
        the database's own collation); each id is still checked again.

        Raises:
            ValidationError: ``prefix`` empty, longer than 128 characters or holding a character
                the id rule refuses (:func:`~sedma_elo.core.ids.check_id_prefix`); ``limit`` out
                of range.
        """
        prefix = check_id_prefix("prefix", prefix)
        if isinstance(limit, bool) or not 1 <= limit <= MAX_RECENT:
            raise ValidationError("limit", f"must be within [1, {MAX_RECENT}]")
        rows = self.db.query(SEARCH_SQL, (self.active_id(), prefix, prefix + "\U0010ffff", limit))
        return [
            {"player_id": r[0], "rating": r[1], "matches_played": r[2]}
            for r in rows
            if r[0].startswith(prefix)
        ]

    def leaderboard(
        self, limit: int = 50, cursor: str | None = None, version_id: int | None = None
    ) -> LeaderboardPage:
        """Players by rating, highest first, ties by player id; keyset pages of ``limit`` (1..500).

        The cursor carries the last row's (rating, player id, rank), so a page costs one index range
        read however deep it is; ranks on later pages assume nobody moved in between.

        Raises:
            ValidationError: bad ``limit`` or ``cursor``.
        """
        vid, rank, sql, params = self._leaderboard_query(limit, cursor, version_id)
        return _leaderboard_page(self.db.query(sql, params), vid, rank, limit)

    async def leaderboard_async(
        self, limit: int = 50, cursor: str | None = None, version_id: int | None = None
    ) -> LeaderboardPage:
        """:meth:`leaderboard` for an event loop: waits for PostgreSQL without blocking the loop."""
        vid, rank, sql, params = self._leaderboard_query(limit, cursor, version_id)
        return _leaderboard_page(await self.reader.query(sql, params), vid, rank, limit)

    def _leaderboard_query(
        self, limit: int, cursor: str | None, version_id: int | None
    ) -> tuple[int, int, str, tuple[object, ...]]:
        """The version, the rank before the page, and the statement of one leaderboard page."""
        _check_limit(limit)
        key = None if cursor is None else leaderboard_key(cursor)  # checked before any database read
        vid = self.active_id() if version_id is None else version_id
        if key is None:
            return vid, 0, LEADERBOARD_FIRST, (vid, limit + 1)
        rating, pid, rank = key
        return vid, rank, LEADERBOARD_AFTER, (vid, rating, rating, pid, limit + 1)

    def around(self, player_id: str, span: int = 5) -> LeaderboardPage:
        """The player's exact rank with up to ``span`` (0..100) players above and below.

        The rank comes from the version's counts by rating (:mod:`.counts`): the higher ratings'
        counts plus the players of the same rating before the player by id.

        Raises:
            NotFoundError: the player has no match in the active version.
            ValidationError: ``span`` out of range.
        """
        _check_span(span)
        vid = self.active_id()
        rows = self.db.query(AROUND_SQL, around_params(vid, player_id, span))
        return around_page(rows, player_id, span, vid)

    async def around_async(self, player_id: str, span: int = 5) -> LeaderboardPage:
        """:meth:`around` for an event loop: one statement through :attr:`reader`."""
        _check_span(span)
        vid = self.active_id()
        rows = await self.reader.query(AROUND_SQL, around_params(vid, player_id, span))
        return around_page(rows, player_id, span, vid)

    def get_match(self, match_id: str) -> dict[str, Any]:
        """The match as stored, with the explanation of its changes in the active version.

        Raises:
            NotFoundError: no match has this id.
        """
        return self.db.read_many(lambda conn: self._match(conn, match_id))

    def _match(self, conn: Connection, match_id: str) -> dict[str, Any]:
        ph = self._ph
        row = conn.exec_driver_sql(
            f"SELECT {MATCH_COLUMNS}, m.voided, m.void_reason FROM {MATCH_FROM} WHERE m.match_id = {ph}",
            (match_id,),
        ).first()
        if row is None:
            raise NotFoundError(f"match {match_id!r} does not exist")
        seq, sub = submission_of(row)
        voided, reason = bool(row[-2]), row[-1]
        version = self._version(conn, self._active_id(conn))
        result = None
        if not voided:
            # The rules that read games played see what the writer saw.
            raw = conn.connection.driver_connection
            before, games = standing_before(raw, ph, version.id, seq)
            result = RatingState(before, games).rate(sub.match, version.rules)
        return match_view(json.loads(sub.body), seq, sub.played_at, version, result, voided, reason)

    def ledger_size(self) -> int:
        """How many matches the ledger holds (voided ones included)."""
        with self.db.read.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(matches)).scalar_one())

    def ledger(self, *, include_voided: bool = False) -> Iterator[tuple[int, Match]]:
        """Every match in sequence order as ``(sequence, match)``.

        ``played_at`` is the posted time, or the time the service applied the match when none was
        posted (a history file needs one).
        """
        where = "" if include_voided else " WHERE NOT m.voided"
        with self.db.read.connect() as conn:
            rows = conn.exec_driver_sql(
                f"SELECT {MATCH_COLUMNS}, m.created_at FROM {MATCH_FROM}{where} ORDER BY m.sequence"
            ).all()
        for row in rows:
            seq, match, played_at = match_of(row)
            stamp = played_at or from_micros(row[-1])
            assert stamp is not None
            when = datetime.fromisoformat(stamp)
            yield seq, dataclasses.replace(match, played_at=when)


def _player_record(player_id: str, version_id: int, rows: list[tuple[Any, ...]]) -> PlayerRecord:
    if not rows:
        raise NotFoundError(f"player {player_id!r} has no rated match")
    rating, played, last = rows[0]
    return PlayerRecord(player_id, rating, played, last, version_id)


def _leaderboard_page(rows: list[tuple[Any, ...]], version_id: int, rank: int, limit: int) -> LeaderboardPage:
    items = [
        {"rank": rank + n + 1, "player_id": r[0], "rating": r[1], "matches_played": r[2]}
        for n, r in enumerate(rows[:limit])
    ]
    nxt = None
    if len(rows) > limit:
        last = items[-1]
        nxt = encode_cursor(last["rating"], last["player_id"], last["rank"])
    return LeaderboardPage(items, nxt, version_id)


def _career_item(r: Any) -> CareerItem:
    """A row of ``_CAREER_SQL`` as a :class:`CareerItem`."""
    when = None if r[2] is None else _EPOCH + timedelta(microseconds=r[2])
    return CareerItem(r[0], r[1], when, r[3], r[4], _WINNER_OF[r[5]], *r[6:14])


def _pg_career(raw: Any, version_id: int, player_id: str) -> list[CareerItem]:
    """The career through ``_CAREER_SQL_PG``: rows with player keys, then the keys' ids at once."""
    rows = raw.execute(_CAREER_SQL_PG, (version_id, player_id)).fetchall()
    keys = sorted({k for r in rows for k in r[6:10] if k is not None})
    names: dict[int | None, str | None] = dict(raw.execute(_NAMES_SQL, (keys,)).fetchall()) if keys else {}
    names[None] = None
    return [
        _career_item((*r[:6], names[r[6]], names[r[7]], names[r[8]], names[r[9]], *r[10:14])) for r in rows
    ]


def _history_bound(limit: int, order: HistoryOrder, cursor: str | None) -> int | None:
    """The checked sequence bound of a history page's ``cursor`` (``None`` for the first page).

    Raises:
        ValidationError: bad ``limit``, ``order`` or ``cursor``.
    """
    _check_limit(limit)
    if order not in ("asc", "desc"):
        raise ValidationError("order", "must be 'asc' or 'desc'")
    return None if cursor is None else history_bound(cursor, order)


def _history_params(vid: int, player_id: str, bound: int | None, limit: int) -> tuple[Any, ...]:
    """The parameters of ``history_sql``: one row more than ``limit`` tells whether a page follows."""
    return (vid, player_id, limit + 1) if bound is None else (vid, player_id, bound, limit + 1)


def _history_page(player_id: str, rows: Sequence[Any], limit: int, order: HistoryOrder) -> HistoryPage:
    """A history page from ``history_sql``'s rows (the sequence second), with the next cursor."""
    items = [_history_item(r) for r in rows[:limit]]
    nxt = history_cursor(rows[limit - 1][1], order) if len(rows) > limit else None
    return HistoryPage(player_id, items, nxt)


def _history_item(row: Any) -> dict[str, Any]:
    """A ``history_sql`` row (player, sequence, before, after, match id, time) in its JSON form."""
    return {
        "sequence": row[1],
        "match_id": row[4],
        "played_at": from_micros(row[5]),
        "rating_before": row[2],
        "rating_after": row[3],
        "delta": row[3] - row[2],
    }


def _check_span(span: int) -> None:
    if isinstance(span, bool) or not 0 <= span <= 100:
        raise ValidationError("span", "must be within [0, 100]")


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise ValidationError("limit", f"must be within [1, {MAX_PAGE}]")
