"""Every busy player's page summary stored in one pass over the ledger, after a bulk change.

An import, re-rate, activation or void leaves the busiest players with no valid stored summary
(:mod:`.career_state`), and a page read folds a whole career before it stores one: 0.2-0.4 s for
10,000 matches on the 10 M league. :meth:`CareerBulkMixin.store_careers` stores them ahead.

It reads every busy player's newer matches in one statement, ordered by player then sequence, and
folds each player in turn (:class:`~.career_state.CareerFold`, the fold a page read uses). Folding
player by player, each with two statements (:meth:`~.career.CareerMixin._fold`), looked up each
match and each win's opponents by key in a different part of the tables for every player: 56 ms
a player on the 1 M league and 76 ms on the 10 M one (docs/service.md, "Page summaries after a
bulk change"). One statement lets the database read the tables once, in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection

from ...errors import ValidationError
from .bulk import stream_rows
from .career import OPPONENTS, OTHER_SIDE, RESULT, SIDE, CareerMixin
from .career_state import CareerFold
from .rebuild import Progress

__all__ = ["STORE_BUSY", "CareerBulkMixin"]

#: :meth:`CareerBulkMixin.store_careers`' default: players with this many matches or more get their
#: summary's state stored after a bulk change (their page's first view is then as fast as the next).
STORE_BUSY = 1000

# The keys of the version's players with at least some matches (parameters: version, matches).
_BUSY_KEYS = (
    "SELECT p.id FROM player_ratings pr JOIN players p ON p.player_id = pr.player_id"
    " WHERE pr.version_id = {ph} AND pr.matches_played >= {ph}"
)
# Those players, and the ``through`` of their state if one is stored under the version's current
# count of rewrites (then only the newer matches are folded).
_BUSY = (
    "SELECT b.id, s.through FROM (" + _BUSY_KEYS + ") b LEFT JOIN career_states s"
    " ON s.version_id = {ph} AND s.player_key = b.id AND s.rewrites = {ph}"
)
_ME = "rc.player_key"
# Each busy player's matches after its stored state, as (player key, sequence, rating after,
# result code, opponent keys, time, twice the other side's mean rating before the match if a win,
# else None); ordered by player then sequence in :func:`_all_sql`.
_ALL = (
    "SELECT rc.player_key, rc.sequence, rc.rating_after, "
    + RESULT.format(me=_ME)
    + ", "
    + OPPONENTS.format(me=_ME)
    + ", m.played_at, CASE WHEN m.winner = "
    + SIDE.format(me=_ME)
    + " THEN (SELECT 2 * sum(o.rating_before) / count(*) FROM rating_changes o"
    " WHERE o.version_id = rc.version_id AND o.sequence = m.sequence AND "
    + OTHER_SIDE.format(me=_ME)
    + ") END"
    " FROM rating_changes rc JOIN matches m ON m.sequence = rc.sequence"
    " LEFT JOIN career_states s ON s.version_id = rc.version_id AND s.player_key = rc.player_key"
    " AND s.rewrites = {ph} WHERE rc.version_id = {ph} AND {key} IN ("
    + _BUSY_KEYS
    + ") AND rc.sequence > coalesce(s.through, 0)"
)


def _all_sql(ph: str, pg: bool) -> str:
    """:data:`_ALL` ordered by player then sequence, for the database at hand.

    SQLite reads each player's changes in that order from the primary key. On PostgreSQL the
    statement is fenced (``OFFSET 0``) and sorted outside, and the key is ``rc.player_key + 0``: so
    the changes are read whole (a hash join with the busy players) and each match and win's
    opponents looked up in the order of the table, which is the ledger's, before the sort. Planned
    with the order inside, it sorted the changes by player first and looked each match up in a
    different part of the table for every player: 3.5 s against 2.2 s for the 423,316 rows of the
    1 M league (2026-12-07; docs/service.md).
    """
    if not pg:
        return _ALL.format(ph=ph, key=_ME) + " ORDER BY rc.player_key, rc.sequence"
    return f"SELECT * FROM ({_ALL.format(ph=ph, key=f'{_ME} + 0')} OFFSET 0) t ORDER BY 1, 2"


_STATE = "SELECT state FROM career_states WHERE version_id = {ph} AND player_key = {ph}"


class CareerBulkMixin(CareerMixin):
    """:meth:`store_careers` (see the module docstring)."""

    def store_careers(self, min_matches: int = STORE_BUSY, progress: Progress | None = None) -> int:
        """Store the summary's state of every player of the active version with at least
        ``min_matches`` matches, so that their pages' first views fold only the matches played
        after it; the number of states written (those already current are left, unless stored in
        the form before migration 0014).

        For after a bulk change (import, re-rate, activate, void). The players' matches are read in
        one snapshot (REPEATABLE READ on PostgreSQL), streamed (memory holds one player's fold and
        one batch of rows); each player's state is written in a short transaction of its own as
        soon as it is folded, so a serving process keeps answering, and a state a page read stored
        meanwhile is not replaced by an older one. ``progress(done, total)`` follows the players
        (it may raise to stop the run between two players).

        Raises:
            ValidationError: ``min_matches`` below 1.
        """
        if min_matches < 1:
            raise ValidationError("min_matches", "must be at least 1")
        with self.db.read.connect() as c:
            conn = c.execution_options(isolation_level="REPEATABLE READ") if self._pg else c
            with conn.begin():
                return self._store_busy(conn, min_matches, progress or (lambda done, total: None))

    def _store_busy(self, conn: Connection, min_matches: int, progress: Progress) -> int:
        ph = self._ph
        vid = self._active_id(conn)
        rewrites = self._rewrites(conn, vid)
        busy: dict[int, int | None] = {
            int(key): through
            for key, through in conn.exec_driver_sql(_BUSY.format(ph=ph), (vid, min_matches, vid, rewrites))
        }
        total, done, stored = len(busy), 0, 0
        progress(0, total)
        raw: Any = conn.connection.driver_connection
        if self._pg:  # compiling the statement cost 0.3-0.8 s on the 1 M league, more than it saved
            conn.exec_driver_sql("SET LOCAL jit = off")
        params = (rewrites, vid, vid, min_matches)
        rows = chain.from_iterable(stream_rows(raw, self._pg, _all_sql(ph, self._pg), params))
        for key, mine in groupby(rows, key=itemgetter(0)):
            fold = CareerFold() if busy.pop(key) is None else self._stored_fold(conn, vid, key)
            _fold_in(fold, mine)
            self._store_state(vid, key, rewrites, fold, wait=True)
            stored, done = stored + 1, done + 1
            progress(done, total)
        for key, through in busy.items():  # no match after the stored state
            if through is not None and (fold := self._stored_fold(conn, vid, key)).legacy:
                self._store_state(vid, key, rewrites, fold, wait=True)
                stored += 1
            done += 1
            progress(done, total)
        return stored

    def _stored_fold(self, conn: Connection, vid: int, key: int) -> CareerFold:
        """The player's stored state (read in the same snapshot as its rows)."""
        text = conn.exec_driver_sql(_STATE.format(ph=self._ph), (vid, key)).scalar_one()
        return CareerFold.from_text(text)


def _fold_in(fold: CareerFold, rows: Iterator[tuple[Any, ...]]) -> None:
    """Fold one player's rows of :data:`_ALL` (sequence order) into ``fold``: the matches, then
    each win as a candidate best win (the first of the highest is kept, as a page read's)."""
    mine = list(rows)
    fold.add(r[1:7] for r in mine)
    for r in mine:
        if r[7] is not None:
            fold.offer_best(r[1], int(r[7]))
