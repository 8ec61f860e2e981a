"""What every part of the ledger stands on: the database, the ratings versions and which one is active.

:class:`LedgerBase` holds the database handles and two caches: the rules of each committed ratings
version (they never change once committed) and the active version's id for readers (trusted for
:attr:`LedgerBase.ACTIVE_TTL` seconds). The other modules of this package add reads, writes,
void/re-rate/activate and verify on top of it.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Connection, insert, select

from ...core.rules import REFERENCE_RULES, Rules, rules_from_toml
from ...errors import NotFoundError
from ...storage import AsyncReader, Database
from ...storage.partitions import create_sql, partition_sql
from ...storage.schema import rating_versions
from .types import VersionInfo, now_text

__all__ = ["LedgerBase"]

_HEAD_SQL = "SELECT (SELECT max(sequence) FROM change_events), (SELECT id FROM rating_versions WHERE active)"
_EVENTS_SQL = "SELECT kind, data FROM change_events WHERE sequence > ? AND sequence <= ? ORDER BY sequence"


class LedgerBase:
    """The rating service's logic over one database (SQLite or PostgreSQL): versions and state."""

    #: How long a reader trusts the active version id it last saw; a switch made by this process is
    #: seen at once, one made by another process within this many seconds.
    ACTIVE_TTL = 1.0

    def __init__(self, db: Database, *, async_connections: int = 16) -> None:
        """The ledger on ``db``; ``async_connections`` bounds :attr:`reader`'s pool (PostgreSQL)."""
        self.db = db
        #: Committed versions by id. Only committed rows may enter: SQLite reuses the id of a
        #: version whose transaction rolled back, so caching an uncommitted one would hand its
        #: rules to the next version created under that id.
        self._versions: dict[int, VersionInfo] = {}
        self._pg = db.dialect == "postgresql"
        self._active: tuple[int, float] | None = None
        self._ph = "%s" if self._pg else "?"
        #: Awaitable hot reads for the HTTP routes (close it with ``await ledger.reader.close()``).
        self.reader = AsyncReader(db, async_connections)
        #: Bumped after every commit of this process that may change what reads answer (matches,
        #: void, re-rate, activate, import), before the change is answered: the read cache
        #: (``service/api/read_cache.py``) reads the feed's head again when it moved.
        self.commits = 0

    def note_change(self) -> None:
        """Note a commit of this process (see :attr:`commits`); call it after the commit.

        Any new value will do, so a bump lost to a race between two writer threads is harmless.
        """
        self.commits += 1

    async def read_head_async(self) -> tuple[int, int | None]:
        """The change feed's last sequence (0 when empty) and the active version's id (or ``None``).

        Together they name what the hot reads answer: every applied match, void and switch writes
        a feed row in its own transaction. One probe of each primary key; it also refreshes the
        active id :meth:`active_id` trusts, so answers computed after it read that version.
        """
        rows = await self.reader.query(_HEAD_SQL)
        head, vid = rows[0]
        if vid is not None:
            self._active = (int(vid), time.monotonic() + self.ACTIVE_TTL)
        return int(head or 0), None if vid is None else int(vid)

    async def read_events_async(self, after: int, through: int) -> list[tuple[str, str]]:
        """The change feed's ``(kind, data text)`` of sequences ``after`` < s <= ``through``, in order."""
        return [(str(k), str(d)) for k, d in await self.reader.query(_EVENTS_SQL, (after, through))]

    def active_id(self) -> int:
        """The active version's id for readers (cached for :attr:`ACTIVE_TTL` seconds).

        Raises:
            NotFoundError: there is no ratings version yet.
        """
        cached = self._active
        now = time.monotonic()
        if cached is not None and cached[1] > now:
            return cached[0]
        rows = self.db.query("SELECT id FROM rating_versions WHERE active")
        if not rows:
            raise NotFoundError("there is no active ratings version")
        vid = int(rows[0][0])
        self._active = (vid, now + self.ACTIVE_TTL)
        return vid

    def _version(self, conn: Connection, version_id: int) -> VersionInfo:
        """The committed version ``version_id`` read on ``conn`` (from the cache when it can)."""
        return self._version_raw(conn.connection.driver_connection, version_id)

    def _version_raw(self, raw: Any, version_id: int) -> VersionInfo:
        """:meth:`_version` on a DBAPI connection (sqlite3 or psycopg).

        Raises:
            NotFoundError: no such version.
        """
        found = self._versions.get(version_id)
        if found is not None:
            return found
        row = raw.execute(
            f"SELECT id, label, rules_toml, created_at FROM rating_versions WHERE id = {self._ph}",
            (version_id,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"ratings version {version_id} does not exist")
        info = VersionInfo(row[0], row[1], rules_from_toml(row[2]), False, row[3])
        self._versions[version_id] = info  # rules of a committed version never change: safe to keep
        return info

    def _active_id(self, conn: Connection) -> int:
        vid = conn.execute(select(rating_versions.c.id).where(rating_versions.c.active)).scalar()
        if vid is None:
            raise NotFoundError("there is no active ratings version")
        return int(vid)

    def active_version(self, conn: Connection | None = None) -> VersionInfo:
        """The version that writes go to and reads come from (created with the reference rules if none)."""
        if conn is None:
            # One lent connection for both reads (Database.read_many: on PostgreSQL no ping and no
            # rollback around them, where two pooled connections of the read engine had both).
            found = self.db.read_many(self._active_or_none)
            if found is None:
                self.ensure_version()
                return self.active_version()
            info = found
        else:
            info = self._version(conn, self._active_id(conn))
        return VersionInfo(info.id, info.label, info.rules, True, info.created_at)

    def _active_or_none(self, conn: Connection) -> VersionInfo | None:
        """The active version read on ``conn``, or None when there is none yet."""
        vid = conn.execute(select(rating_versions.c.id).where(rating_versions.c.active)).scalar()
        return None if vid is None else self._version(conn, int(vid))

    def ensure_version(self, rules: Rules = REFERENCE_RULES) -> int:
        """Create the first ratings version with ``rules`` when there is none; return the active id."""
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            vid = conn.execute(select(rating_versions.c.id).where(rating_versions.c.active)).scalar()
            if vid is not None:
                return int(vid)
            return self._insert_version(conn, rules, rules.label, active=True).id

    def _insert_version(
        self, conn: Connection, rules: Rules, label: str, *, active: bool, bare: bool = False
    ) -> VersionInfo:
        """Add a version row in ``conn``'s transaction; the answer is not cached (it may roll back).

        On PostgreSQL the version's partition of ``rating_changes`` is made too
        (:mod:`~sedma_elo.storage.partitions`): attached and ready for writes, or with ``bare`` a
        table without indexes, not yet attached, for the caller to fill, index and attach."""
        created_at = now_text()
        text = rules.to_toml()
        result = conn.execute(
            insert(rating_versions)
            .values(
                label=label,
                rules_label=rules.label,
                rules_toml=text,
                active=active,
                created_at=created_at,
            )
            .returning(rating_versions.c.id)
        )
        vid = int(result.scalar_one())
        if self._pg:
            for statement in create_sql(vid) if bare else partition_sql(vid):
                conn.exec_driver_sql(statement)
        # The rules as later readers will see them (parsed from the stored text), so a rebuild with
        # this answer and a verify after the commit use equal rules.
        return VersionInfo(vid, label, rules_from_toml(text), active, created_at)

    def versions(self) -> list[VersionInfo]:
        """Every ratings version, oldest first."""
        with self.db.read.connect() as conn:
            rows = conn.execute(select(rating_versions).order_by(rating_versions.c.id)).all()
            out = []
            for row in rows:
                info = self._version(conn, row.id)
                out.append(VersionInfo(info.id, info.label, info.rules, bool(row.active), info.created_at))
        return out

    def _lock_ledger(self, conn: Connection) -> None:
        # SQLite: BEGIN IMMEDIATE already holds the single write lock. PostgreSQL: EXCLUSIVE blocks
        # every match write (ROW EXCLUSIVE) but lets readers through.
        if self._pg:
            conn.exec_driver_sql("LOCK TABLE matches IN EXCLUSIVE MODE")
