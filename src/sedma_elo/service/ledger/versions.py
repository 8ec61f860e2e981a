"""Changing ratings versions: void a match, re-rate the ledger under new rules, activate a version.

Each takes the whole ledger exclusively (writes wait, reads go on) and rebuilds ratings from the
ledger with the one fold (:class:`~sedma_elo.core.fold.RatingState`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from ...core.fold import RatingState
from ...core.rules import Rules
from ...errors import NotFoundError
from ...storage.schema import matches, player_ratings, players, rating_changes, rating_versions
from . import feed_events
from .answers import drop_derivable, keep_answers
from .reads import ReadsMixin
from .rows import MATCH_COLUMNS, MATCH_FROM, from_micros, keys_of, match_of
from .types import VersionInfo
from .write_pg import write_players_pg
from .write_sqlite import write_players_sqlite

__all__ = ["VersionsMixin"]

#: Rating changes inserted per statement by a rebuild.
_CHUNK = 5000


class VersionsMixin(ReadsMixin):
    """Void, re-rate and activate."""

    def void(self, match_id: str, reason: str = "") -> dict[str, Any]:
        """Void a match and recompute every version from it on; return the match's view.

        Voiding an already voided match changes nothing.

        Raises:
            NotFoundError: no match has this id.
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            m = matches.c
            row = conn.execute(
                select(m.sequence, m.voided, m.played_at).where(m.match_id == match_id)
            ).first()
            if row is None:
                raise NotFoundError(f"match {match_id!r} does not exist")
            if not row.voided:
                why = reason[:500] or None
                active = self._active_id(conn)
                feed_before = feed_events.touched_ratings(conn, active, row.sequence)
                # An inactive version holds matches only up to its snapshot: rebuild no further.
                ids = [int(v) for v in conn.execute(select(rating_versions.c.id)).scalars().all()]
                throughs = {vid: self._through(conn, vid) for vid in ids}
                rebuilt = [vid for vid in ids if throughs[vid] >= row.sequence]
                raw: Any = conn.connection.driver_connection
                # The rebuild changes what later answers derive from: keep those texts first.
                keep_answers(raw, self._ph, self._version_raw, rebuilt, row.sequence)
                # A repeat of a voided match answers its voided view in the version active now.
                conn.execute(
                    update(matches)
                    .where(m.sequence == row.sequence)
                    .values(voided=True, void_reason=why, version_id=self._active_id(conn))
                )
                for vid in rebuilt:
                    self._rebuild_from(conn, self._version(conn, vid), row.sequence, throughs[vid])
                drop_derivable(raw, self._ph, self._version_raw, row.sequence - 1)
                voided = feed_events.Voided(active, match_id, row.sequence, from_micros(row.played_at), why)
                feed_events.record_void(conn, voided, feed_before)
        return self.get_match(match_id)

    def rerate(self, rules: Rules, label: str | None = None, *, activate: bool = True) -> VersionInfo:
        """Replay the whole non-voided ledger under ``rules`` into a new version; optionally activate it.

        Runs in one transaction holding the ledger exclusively: writes wait, reads go on against the
        old active version until the switch commits. A refused re-rate (the engine refuses a match
        under ``rules``) leaves nothing behind.

        Raises:
            ValidationError: ``rules`` cannot rate the ledger (a rating out of range...).
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            # The new version is rebuilt from the answer of the insert, never through the version
            # cache: if this transaction rolls back, SQLite hands its id to the next version.
            version = self._insert_version(conn, rules, label or rules.label, active=False)
            self._rebuild_from(conn, version, 0)
            if activate:
                previous = feed_events.active_or_none(conn)
                self._switch(conn, version.id)
                feed_events.record_switch(conn, version, previous)
        self._active = None
        return next(v for v in self.versions() if v.id == version.id)

    def activate(self, version_id: int) -> VersionInfo:
        """Make ``version_id`` the active version (atomically; the previous one stays readable).

        Raises:
            NotFoundError: no such version.
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            version = self._version(conn, version_id)
            # An inactive version received no new matches: catch it up with the ledger first.
            self._rebuild_from(conn, version, self._through(conn, version_id) + 1)
            previous = feed_events.active_or_none(conn)
            self._switch(conn, version_id)
            feed_events.record_switch(conn, version, previous)
        self._active = None
        return next(v for v in self.versions() if v.id == version_id)

    @staticmethod
    def _through(conn: Connection, version_id: int) -> int:
        """The last sequence applied to a version: it holds every non-voided match up to there."""
        last = conn.execute(
            select(func.max(rating_changes.c.sequence)).where(rating_changes.c.version_id == version_id)
        ).scalar()
        return int(last or 0)

    @staticmethod
    def _switch(conn: Connection, version_id: int) -> None:
        conn.execute(update(rating_versions).where(rating_versions.c.id != version_id).values(active=False))
        conn.execute(update(rating_versions).where(rating_versions.c.id == version_id).values(active=True))

    def _rebuild_from(
        self, conn: Connection, version: VersionInfo, start: int, end: int | None = None
    ) -> None:
        """Recompute ``version`` for every non-voided match with ``start <= sequence <= end``.

        ``end`` (default: the whole ledger) lets a void rebuild an inactive version only as far as
        its snapshot goes (:meth:`_through`); activation catches it up later.
        """
        vid = version.id
        rc, pr = rating_changes.c, player_ratings.c
        # Roll every touched player back to where they stood before ``start``.
        firsts = conn.execute(
            select(players.c.player_id, rc.player_key, func.min(rc.sequence).label("first"))
            .join(players, players.c.id == rc.player_key)
            .where(rc.version_id == vid, rc.sequence >= start)
            .group_by(players.c.player_id, rc.player_key)
        ).all()
        for pid, key, first in firsts:
            before = conn.execute(
                select(rc.rating_before).where(
                    rc.version_id == vid, rc.player_key == key, rc.sequence == first
                )
            ).scalar_one()
            earlier = conn.execute(
                select(func.count(), func.max(rc.sequence)).where(
                    rc.version_id == vid, rc.player_key == key, rc.sequence < start
                )
            ).one()
            if earlier[0] == 0:
                conn.execute(delete(player_ratings).where(pr.version_id == vid, pr.player_id == pid))
            else:
                conn.execute(
                    update(player_ratings)
                    .where(pr.version_id == vid, pr.player_id == pid)
                    .values(rating=before, matches_played=earlier[0], last_sequence=earlier[1])
                )
        conn.execute(delete(rating_changes).where(rc.version_id == vid, rc.sequence >= start))

        state = RatingState()
        ratings, played = state.ratings, state.games
        known: set[str] = set()
        last_seq: dict[str, int] = {}
        keys: dict[str, int] = {}
        ph = self._ph
        rows = conn.exec_driver_sql(
            f"SELECT {MATCH_COLUMNS} FROM {MATCH_FROM} WHERE m.sequence >= {ph} AND m.sequence <= {ph}"
            " AND NOT m.voided ORDER BY m.sequence",
            (start, end if end is not None else 2**62),
        ).all()
        chunk: list[dict[str, Any]] = []
        for row in rows:
            seq, match, _ = match_of(row)
            keys.update(keys_of(row))
            missing = [p for p in match.players if p not in ratings and p not in played]
            if missing:
                # A player's standing before ``start`` (rating and games played) comes from the table.
                for r in conn.execute(
                    select(pr.player_id, pr.rating, pr.matches_played).where(
                        pr.version_id == vid, pr.player_id.in_(missing)
                    )
                ):
                    ratings[r.player_id] = r.rating
                    played[r.player_id] = r.matches_played
                    known.add(r.player_id)
                for p in missing:
                    played.setdefault(p, 0)
            result = state.apply(match, version.rules)
            for change in result.changes:
                last_seq[change.player_id] = seq
                chunk.append(
                    {
                        "version_id": vid,
                        "sequence": seq,
                        "player_key": keys[change.player_id],
                        "rating_before": change.rating_before,
                        "rating_after": change.rating_after,
                    }
                )
            if len(chunk) >= _CHUNK:
                conn.execute(insert(rating_changes), chunk)
                chunk = []
        if chunk:
            conn.execute(insert(rating_changes), chunk)
        raw: Any = conn.connection.driver_connection  # psycopg or sqlite3, as the dialect says
        write_players = write_players_pg if self._pg else write_players_sqlite
        write_players(raw, vid, ratings, played, last_seq, known)
