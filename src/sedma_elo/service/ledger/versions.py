"""Changing ratings versions: void a match, re-rate the ledger under new rules, activate a version.

Each takes the whole ledger exclusively (writes wait, reads go on) and rebuilds ratings from the
ledger through the bulk path (:mod:`.bulk`): compact rows read in chunks as arrays, rated by the
batch kernel (the numba mirror of :class:`~sedma_elo.core.fold.RatingState`, tested to agree) and
by the fold itself for two-against-two matches, the changes written with COPY or executemany.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from typing import Any

import numpy as np
from sqlalchemy import Connection, func, select, update

from ...core.rules import Rules
from ...errors import NotFoundError
from ...storage.partitions import finish_sql, partition_name
from ...storage.schema import matches, rating_changes, rating_versions
from . import feed_events
from .answers import Standings, StandingsOf, drop_derivable, keep_answers
from .bulk import read_changes, write_changes
from .career_bulk import CareerBulkMixin
from .rebuild import Progress, Rebuild, changed_sequences, rebuild_cache, standings_table
from .rows import from_micros
from .types import VersionInfo

__all__ = ["VersionsMixin"]


def _held(tables: dict[int, Callable[[list[int]], Standings]]) -> StandingsOf:
    """The :data:`~.answers.StandingsOf` of the rebuilt versions' tables (None for another version)."""
    return lambda version_id, seqs: tables[version_id](seqs) if version_id in tables else None


class VersionsMixin(CareerBulkMixin):
    """Void, re-rate and activate."""

    def void(self, match_id: str, reason: str = "", *, progress: Progress | None = None) -> dict[str, Any]:
        """Void a match and recompute every version from it on; return the match's view.

        Voiding an already voided match changes nothing. ``progress(done, total)`` follows each
        version's rebuild.

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
                # Rate every rebuilt version first, without writing: the new changes say which
                # later answers the rebuild changes, and those texts are kept before it is written.
                plans = []
                for vid in rebuilt:
                    plan = Rebuild(
                        raw, self._ph, self._version(conn, vid), row.sequence, throughs[vid], row.sequence
                    )
                    with closing(plan.rate(progress)) as rated:
                        new = np.concatenate([np.empty((0, 4), dtype=np.int64), *rated])
                    old = read_changes(raw, self._pg, vid, row.sequence - 1, throughs[vid])
                    plans.append((plan, new, changed_sequences(old, new), old))
                changed = set().union(*(p[2] for p in plans))
                # The standings before and after come from the arrays: reading them cost a count(*)
                # per player per later match (most of a PostgreSQL void's 185 s).
                before = _held({p[0].version.id: standings_table(p[0], p[3]) for p in plans})
                after = _held({p[0].version.id: standings_table(p[0], p[1]) for p in plans})
                keep_answers(raw, self._ph, self._version_raw, rebuilt, row.sequence, changed, before)
                # A repeat of a voided match answers its voided view in the version active now.
                conn.execute(
                    update(matches)
                    .where(m.sequence == row.sequence)
                    .values(voided=True, void_reason=why, version_id=self._active_id(conn))
                )
                with rebuild_cache(raw, self._pg):
                    for plan, new, _, _ in plans:
                        plan.roll_back()
                        write_changes(raw, self._pg, plan.version.id, new)
                        plan.write_players()
                drop_derivable(raw, self._ph, self._version_raw, row.sequence - 1, after)
                if rebuilt:  # the stored career states of these versions are stale now (career_state.py)
                    rv = rating_versions.c
                    conn.execute(
                        update(rating_versions).where(rv.id.in_(rebuilt)).values(rewrites=rv.rewrites + 1)
                    )
                voided = feed_events.Voided(active, match_id, row.sequence, from_micros(row.played_at), why)
                feed_events.record_void(conn, voided, feed_before)
        self.note_change()
        return self.get_match(match_id)

    def rerate(
        self,
        rules: Rules,
        label: str | None = None,
        *,
        activate: bool = True,
        progress: Progress | None = None,
    ) -> VersionInfo:
        """Replay the whole non-voided ledger under ``rules`` into a new version; optionally activate it.

        Runs in one transaction holding the ledger exclusively: writes wait, reads go on against the
        old active version until the switch commits. A refused re-rate (the engine refuses a match
        under ``rules``) leaves nothing behind. ``progress(done, total)`` follows the rebuild.

        Raises:
            ValidationError: ``rules`` cannot rate the ledger (a rating out of range...).
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            # The new version is rebuilt from the answer of the insert, never through the version
            # cache: if this transaction rolls back, SQLite hands its id to the next version.
            # PostgreSQL: the version's partition is filled bare and indexed afterwards (one sort
            # per index instead of 1.2 M b-tree insertions each, on the ATP file).
            version = self._insert_version(conn, rules, label or rules.label, active=False, bare=self._pg)
            self._rebuild_from(conn, version, 0, progress, fresh=self._pg)
            if activate:
                previous = feed_events.active_or_none(conn)
                self._switch(conn, version.id)
                feed_events.record_switch(conn, version, previous)
        self._active = None
        self.note_change()
        return next(v for v in self.versions() if v.id == version.id)

    def activate(self, version_id: int, *, progress: Progress | None = None) -> VersionInfo:
        """Make ``version_id`` the active version (atomically; the previous one stays readable).

        ``progress(done, total)`` follows the catching up of the matches it has not applied yet.

        Raises:
            NotFoundError: no such version.
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            version = self._version(conn, version_id)
            # An inactive version received no new matches: catch it up with the ledger first.
            self._rebuild_from(conn, version, self._through(conn, version_id) + 1, progress)
            previous = feed_events.active_or_none(conn)
            self._switch(conn, version_id)
            feed_events.record_switch(conn, version, previous)
        self._active = None
        self.note_change()
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
        self,
        conn: Connection,
        version: VersionInfo,
        start: int,
        progress: Progress | None = None,
        *,
        fresh: bool = False,
    ) -> None:
        """Recompute ``version`` for every non-voided match from sequence ``start`` on, streaming:
        each chunk is rated (:class:`.rebuild.Rebuild`) and its changes written at once.

        ``fresh`` (PostgreSQL): the version's partition is the bare table of
        ``_insert_version(bare=True)``; the changes are copied into it, then it is indexed and attached.

        Raises:
            ValidationError: the rules refuse a match (as the fold would).
        """
        raw: Any = conn.connection.driver_connection  # psycopg or sqlite3, as the dialect says
        into = partition_name(version.id) if fresh else None
        with rebuild_cache(raw, self._pg):
            plan = Rebuild(raw, self._ph, version, start, 2**62)
            plan.roll_back()
            # In line on both databases: a reading and a writing thread on PostgreSQL (branch
            # rerate3) measured no gain once the rows went into a bare partition; on SQLite a writing
            # thread was slower (``executemany`` takes the GIL back for every row).
            with closing(plan.rate(progress)) as rated:
                for changes in rated:
                    write_changes(raw, self._pg, version.id, changes, into)
            if fresh:
                for statement in finish_sql(version.id):
                    raw.execute(statement)
            plan.write_players()
