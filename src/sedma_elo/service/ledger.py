"""The match ledger: apply matches exactly once and in order, void, re-rate, verify and read.

Everything here takes a :class:`~sedma_elo.storage.Database` (or a connection inside one of its
transactions) and returns plain domain objects; the HTTP routes and the CLI are thin layers on top.

Guarantees (see ``docs/service.md``):

* a batch of matches is applied in one transaction: ledger rows, rating changes and ratings commit
  together or not at all;
* a ``match_id`` is stored once (unique constraint); a repeat with the same canonical body gets the
  stored response, with a different body a :class:`~sedma_elo.errors.ConflictError`;
* ``sequence`` is taken after the players' rows are locked (``SELECT ... FOR UPDATE`` in player id
  order on PostgreSQL, the database write lock on SQLite), so two matches sharing a player get
  sequences in the order they were applied, and replaying the ledger by sequence reproduces every
  stored rating (:func:`verify`);
* void and re-rate take the whole ledger exclusively and rebuild ratings from the ledger.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import psycopg
from sqlalchemy import Connection, and_, delete, func, insert, or_, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.pool import PoolProxiedConnection

from ..core._jsontext import json_scalar, json_string
from ..core.engine import RatingResult
from ..core.explain import change_to_dict, change_to_json
from ..core.fold import RatingState
from ..core.ids import check_id_prefix
from ..core.model import Match
from ..core.rules import MAX_RATING, MIN_RATING, REFERENCE_RULES, Rules, rules_from_toml
from ..errors import ConflictError, NotFoundError, SedmaEloError, ValidationError
from ..storage import AsyncReader, Database
from ..storage.schema import matches, player_ratings, rating_changes, rating_versions
from .payload import Submission, match_from_body, submission_from_match

__all__ = [
    "MAX_RECENT",
    "ApplyOutcome",
    "HistoryOrder",
    "HistoryPage",
    "ImportReport",
    "LeaderboardPage",
    "Ledger",
    "PlayerRecord",
    "VerifyReport",
    "VersionInfo",
    "WriterSession",
    "now_text",
    "replay",
]

_log = logging.getLogger(__name__)

MAX_PAGE = 500
#: Most players, and most changes per player, that :meth:`Ledger.recent_changes` answers at once.
MAX_RECENT = 100
#: The order of a player's history: oldest first or newest first.
HistoryOrder = Literal["asc", "desc"]
_RETRIES = 20


def now_text() -> str:
    """The current UTC time as ISO 8601 text."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------- domain objects
@dataclass(frozen=True, slots=True)
class VersionInfo:
    """A ratings version: the rules its ratings were computed with."""

    id: int
    label: str
    rules: Rules
    active: bool
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (without the rules text)."""
        return {
            "id": self.id,
            "label": self.label,
            "rules": self.rules.label,
            "active": self.active,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class ApplyOutcome:
    """What happened to one submitted match.

    ``status`` is ``created`` (applied now, answer 201), ``repeat`` (same body seen before, 200)
    or ``error`` (``error`` says why; nothing was stored for it). ``body`` is the JSON answer.
    """

    status: Literal["created", "repeat", "error"]
    body: str = ""
    error: SedmaEloError | None = None
    failure: Exception | None = None  # an unexpected error (a server error, not the client's)


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """A player's current standing in a ratings version."""

    player_id: str
    rating: int
    matches_played: int
    last_sequence: int
    version_id: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "player_id": self.player_id,
            "rating": self.rating,
            "matches_played": self.matches_played,
            "last_sequence": self.last_sequence,
            "ratings_version": self.version_id,
        }


@dataclass(frozen=True, slots=True)
class LeaderboardPage:
    """One page of the leaderboard; ``next_cursor`` is ``None`` on the last page."""

    items: list[dict[str, Any]]
    next_cursor: str | None
    version_id: int


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of a player's rating history (oldest or newest first, as asked)."""

    player_id: str
    items: list[dict[str, Any]]
    next_cursor: str | None


@dataclass
class ImportReport:
    """What an import did: matches applied, repeats recognised, and refusals with their reasons."""

    created: int = 0
    repeated: int = 0
    refused: list[str] = field(default_factory=list)


@dataclass
class VerifyReport:
    """The result of :func:`Ledger.verify`: empty ``mismatches`` means every version agrees."""

    versions: int = 0
    matches: int = 0
    players: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the stored ratings equal a pure replay of the ledger."""
        return not self.mismatches


# ---------------------------------------------------------------------------- pure replay
def replay(
    entries: Iterable[tuple[int, Match]], rules: Rules, state: RatingState | None = None
) -> Iterator[tuple[int, RatingResult]]:
    """Apply matches in the given order with the one fold, updating ``state`` in place.

    Yields each ``(sequence, result)``. This is the definition every stored rating must agree with.
    """
    current = RatingState() if state is None else state
    for seq, match in entries:
        yield seq, current.apply(match, rules)


def _is_retryable(exc: Exception) -> bool:
    """Whether a failed batch may succeed when tried again (a race with another writer)."""
    if isinstance(exc, _TryAgain | IntegrityError):
        return True  # a concurrent insert of the same player or match id; the retry sees it
    if isinstance(exc, OperationalError):
        msg = str(exc.orig).lower()
        return "deadlock" in msg or "could not serialize" in msg or "database is locked" in msg
    if isinstance(exc, sqlite3.OperationalError):  # a writer outside the lock file outlasted busy_timeout
        return "database is locked" in str(exc).lower()
    return isinstance(exc, psycopg.Error) and exc.sqlstate in _RETRYABLE_SQLSTATES


#: unique_violation (a concurrent insert of the same id), serialization_failure, deadlock_detected
_RETRYABLE_SQLSTATES = frozenset({"23505", "40001", "40P01"})


def _repeat_or_conflict(sub: Submission, body_hash: str, response: str) -> ApplyOutcome:
    if body_hash == sub.body_hash:
        return ApplyOutcome("repeat", response)
    return ApplyOutcome(
        "error",
        error=ConflictError(f"match_id {sub.match_id!r} was already used for a different match"),
    )


class _Batch:
    """A batch's submissions sorted into repeats of stored ids, repeats within the batch and new ones.

    ``todo`` holds the indexes to apply, in arrival order; :meth:`settle` answers the in-batch
    repeats from the outcome of their first occurrence once that is known.
    """

    def __init__(self, subs: Sequence[Submission], stored: dict[str, tuple[str, str]]) -> None:
        self.subs = subs
        self.outcomes: list[ApplyOutcome | None] = [None] * len(subs)
        self.first: dict[str, int] = {}
        self.todo: list[int] = []
        for i, sub in enumerate(subs):
            seen = stored.get(sub.match_id)
            if seen is not None:
                self.outcomes[i] = _repeat_or_conflict(sub, seen[0], seen[1])
            elif sub.match_id not in self.first:
                self.first[sub.match_id] = i
                self.todo.append(i)

    def settle(self) -> list[ApplyOutcome]:
        """Every submission's outcome, in order (call after each ``todo`` index has one)."""
        out = []
        for i, sub in enumerate(self.subs):
            outcome = self.outcomes[i]
            if outcome is None:
                j = self.first[sub.match_id]
                first = self.outcomes[j]
                assert first is not None
                if first.status == "created":
                    outcome = _repeat_or_conflict(sub, self.subs[j].body_hash, first.body)
                else:
                    outcome = first
            out.append(outcome)
        return out


@dataclass
class _BatchRows:
    """The rows a rated batch adds: ``matches`` and ``changes`` rows, and each player's last sequence."""

    matches: list[tuple[Any, ...]] = field(default_factory=list)
    changes: list[tuple[int, int, str, int, int]] = field(default_factory=list)
    last_seq: dict[str, int] = field(default_factory=dict)


class _TryAgain(Exception):
    """The batch met a passing condition (a concurrent write between its reads, a lost connection)."""


# PostgreSQL statements of the batch write path (see Ledger._apply_pg). Arrays travel in binary
# (%b): the text format escaped every quote of the stored JSON, half the CPU of a batch.
_PG_STORED = "SELECT match_id, body_hash, response FROM matches WHERE match_id = ANY(%b)"
_PG_LOCK_PLAYERS = (
    "SELECT player_id, rating, matches_played FROM player_ratings"
    " WHERE version_id = (SELECT id FROM rating_versions WHERE active) AND player_id = ANY(%b)"
    " ORDER BY player_id FOR UPDATE"
)
_PG_SEQUENCES = (
    "SELECT nextval('ledger_sequence') FROM generate_series(1,"
    " %s - (SELECT count(*) FROM matches WHERE match_id = ANY(%b)))"
)
_PG_INSERT_MATCHES = (
    "INSERT INTO matches (sequence, match_id, body, body_hash, response, played_at, version_id, voided,"
    " void_reason, created_at) SELECT u.*, %s, false, NULL, %s FROM unnest(CAST(%b AS bigint[]),"
    " CAST(%b AS text[]), CAST(%b AS text[]), CAST(%b AS text[]), CAST(%b AS text[]),"
    " CAST(%b AS text[])) AS u"
)
_PG_INSERT_CHANGES = (
    "INSERT INTO rating_changes (version_id, sequence, player_id, rating_before, rating_after)"
    " SELECT %s, u.* FROM unnest(CAST(%b AS bigint[]), CAST(%b AS text[]), CAST(%b AS integer[]),"
    " CAST(%b AS integer[])) AS u"
)
_PG_INSERT_PLAYERS = (
    "INSERT INTO player_ratings (version_id, player_id, rating, matches_played, last_sequence)"
    " SELECT %s, u.* FROM unnest(CAST(%b AS text[]), CAST(%b AS integer[]), CAST(%b AS integer[]),"
    " CAST(%b AS bigint[])) AS u"
)
_PG_UPDATE_PLAYERS = (
    "UPDATE player_ratings AS p SET rating = u.rating, matches_played = u.played, last_sequence = u.last"
    " FROM unnest(CAST(%b AS text[]), CAST(%b AS integer[]), CAST(%b AS integer[]), CAST(%b AS bigint[]))"
    " AS u(player_id, rating, played, last) WHERE p.version_id = %s AND p.player_id = u.player_id"
)


def _encode_cursor(*parts: object) -> str:
    import base64

    return base64.urlsafe_b64encode(json.dumps(list(parts)).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str, field_name: str = "cursor") -> list[Any]:
    import base64

    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError(field_name, "is not a cursor returned by this service") from exc
    if not isinstance(value, list):
        raise ValidationError(field_name, "is not a cursor returned by this service")
    return value


class Ledger:
    """The rating service's logic over one database (SQLite or PostgreSQL)."""

    #: How long a reader trusts the active version id it last saw; a switch made by this process is
    #: seen at once, one made by another process within this many seconds.
    ACTIVE_TTL = 1.0

    def __init__(self, db: Database, *, async_connections: int = 16) -> None:
        """The ledger on ``db``; ``async_connections`` bounds :attr:`reader`'s pool (PostgreSQL)."""
        self.db = db
        self._versions: dict[int, VersionInfo] = {}
        self._pg = db.dialect == "postgresql"
        self._active: tuple[int, float] | None = None
        self._ph = "%s" if self._pg else "?"
        #: Awaitable hot reads for the HTTP routes (close it with ``await ledger.reader.close()``).
        self.reader = AsyncReader(db, async_connections)

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

    # ------------------------------------------------------------------ versions
    def _version(self, conn: Connection, version_id: int) -> VersionInfo:
        return self._version_raw(conn.connection.driver_connection, version_id)

    def _active_id(self, conn: Connection) -> int:
        vid = conn.execute(select(rating_versions.c.id).where(rating_versions.c.active)).scalar()
        if vid is None:
            raise NotFoundError("there is no active ratings version")
        return int(vid)

    def active_version(self, conn: Connection | None = None) -> VersionInfo:
        """The version that writes go to and reads come from (created with the reference rules if none)."""
        if conn is None:
            with self.db.read.connect() as c:
                vid = c.execute(select(rating_versions.c.id).where(rating_versions.c.active)).scalar()
            if vid is None:
                self.ensure_version()
                return self.active_version()
            with self.db.read.connect() as c:
                info = self._version(c, int(vid))
        else:
            info = self._version(conn, self._active_id(conn))
        return VersionInfo(info.id, info.label, info.rules, True, info.created_at)

    def ensure_version(self, rules: Rules = REFERENCE_RULES) -> int:
        """Create the first ratings version with ``rules`` when there is none; return the active id."""
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            vid = conn.execute(select(rating_versions.c.id).where(rating_versions.c.active)).scalar()
            if vid is not None:
                return int(vid)
            return self._insert_version(conn, rules, rules.label, active=True)

    def _insert_version(self, conn: Connection, rules: Rules, label: str, *, active: bool) -> int:
        result = conn.execute(
            insert(rating_versions)
            .values(
                label=label,
                rules_label=rules.label,
                rules_toml=rules.to_toml(),
                active=active,
                created_at=now_text(),
            )
            .returning(rating_versions.c.id)
        )
        return int(result.scalar_one())

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

    # ------------------------------------------------------------------ writes
    def apply(self, submissions: Sequence[Submission]) -> list[ApplyOutcome]:
        """Apply a batch of matches in one transaction, in the given order; never raises for one bad match.

        A repeated ``match_id`` (stored before or earlier in the batch) gets ``repeat`` when its
        canonical body is equal and a :class:`ConflictError` otherwise. If the batch transaction
        fails as a whole, each match is retried in a transaction of its own so that one bad match
        cannot fail the others.
        """
        with self.writer_session() as session:
            return session.apply(submissions)

    @contextmanager
    def writer_session(self) -> Iterator[WriterSession]:
        """A :class:`WriterSession` on this ledger, closed (its connection returned) at the end."""
        session = WriterSession(self)
        try:
            yield session
        finally:
            session.close()

    def _apply_sqlite(self, raw: sqlite3.Connection, subs: Sequence[Submission]) -> list[ApplyOutcome]:
        """Apply ``subs`` in one SQLite transaction on ``raw``, holding the database's write lock."""
        with self.db.write_lock or contextlib.nullcontext():
            raw.execute("BEGIN IMMEDIATE")
            try:
                outcomes = self._apply_sqlite_in(raw, subs)
                raw.execute("COMMIT")
            except BaseException:
                if raw.in_transaction:
                    raw.rollback()
                raise
        return outcomes

    def _apply_sqlite_in(self, raw: sqlite3.Connection, subs: Sequence[Submission]) -> list[ApplyOutcome]:
        # Driver-level statements: the SQLAlchemy layers cost the writer a fifth of its CPU here.
        active = raw.execute("SELECT id FROM rating_versions WHERE active").fetchone()
        if active is None:
            raise NotFoundError("there is no active ratings version")
        version = self._version_raw(raw, int(active[0]))
        ids = list({s.match_id for s in subs})
        stored = {
            row[0]: (row[1], row[2])
            for row in raw.execute(
                "SELECT match_id, body_hash, response FROM matches"
                f" WHERE match_id IN ({', '.join('?' * len(ids))})",
                ids,
            )
        }
        batch = _Batch(subs, stored)
        players = sorted({p for i in batch.todo for p in subs[i].match.players})
        ratings: dict[str, int] = {}
        played: dict[str, int] = {}
        if players:
            # ORDER BY player_id steers SQLite to the primary key; without it the planner scanned the
            # whole version through the rank index (a 3x slower write path at 100,000 players).
            rows = raw.execute(
                "SELECT player_id, rating, matches_played FROM player_ratings WHERE version_id = ?"
                f" AND player_id IN ({', '.join('?' * len(players))}) ORDER BY player_id",
                (version.id, *players),
            )
            for pid, rating, count in rows:
                ratings[pid] = rating
                played[pid] = count
        known = set(ratings)
        # The sequence is taken only now, with the database's write lock held.
        top = int(raw.execute("SELECT coalesce(max(sequence), 0) FROM matches").fetchone()[0])
        sequences = range(top + 1, top + 1 + len(batch.todo))
        out = self._rate_batch(batch, version, ratings, played, sequences)
        if out.matches:
            raw.executemany(
                "INSERT INTO matches (sequence, match_id, body, body_hash, response, played_at, version_id,"
                " voided, void_reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, ?)",
                out.matches,
            )
            raw.executemany(
                "INSERT INTO rating_changes (version_id, sequence, player_id, rating_before, rating_after)"
                " VALUES (?, ?, ?, ?, ?)",
                out.changes,
            )
            self._write_players(raw, version.id, ratings, played, out.last_seq, known)
        return batch.settle()

    def _apply_pg(self, raw: psycopg.Connection[Any], subs: Sequence[Submission]) -> list[ApplyOutcome]:
        """Apply ``subs`` in one PostgreSQL transaction of two round trips (psycopg pipeline mode).

        The first round trip takes the locks and reads (active version, stored ids, the players'
        rows ``FOR UPDATE`` in player id order, then the sequences); the second writes and commits.
        Statements run in the order sent, so every sequence is still taken with the players locked.
        """
        ids = list(dict.fromkeys(s.match_id for s in subs))
        players = sorted({p for s in subs for p in s.match.players})
        with raw.pipeline(), raw.transaction():
            # Conflicts with void/re-rate's EXCLUSIVE lock, so the active version read is current.
            raw.execute("LOCK TABLE matches IN ROW EXCLUSIVE MODE")
            active_cur = raw.execute("SELECT id FROM rating_versions WHERE active")
            stored_cur = raw.execute(_PG_STORED, (ids,))
            players_cur = raw.execute(_PG_LOCK_PLAYERS, (players,))
            seq_cur = raw.execute(_PG_SEQUENCES, (len(ids), ids))
            active = active_cur.fetchone()  # the pipeline's first sync: one round trip
            if active is None:
                raise NotFoundError("there is no active ratings version")
            version = self._version_raw(raw, int(active[0]))
            batch = _Batch(subs, {r[0]: (r[1], r[2]) for r in stored_cur.fetchall()})
            ratings = {}
            played = {}
            for pid, rating, count in players_cur.fetchall():
                ratings[pid] = rating
                played[pid] = count
            known = set(ratings)
            sequences = sorted(int(r[0]) for r in seq_cur.fetchall())
            if len(sequences) < len(batch.todo):
                # Another process stored one of these ids between two of the reads above.
                raise _TryAgain("a match of the batch was stored concurrently")
            rows_out = self._rate_batch(batch, version, ratings, played, sequences)
            if rows_out.matches:
                self._write_pg(raw, version.id, rows_out)
                self._write_players(raw, version.id, ratings, played, rows_out.last_seq, known)
        return batch.settle()

    def _version_raw(self, raw: Any, version_id: int) -> VersionInfo:
        """:meth:`_version` on a DBAPI connection (sqlite3 or psycopg), from the cache when it can."""
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
        self._versions[version_id] = info  # rules of a version never change: safe to keep
        return info

    @staticmethod
    def _write_pg(raw: psycopg.Connection[Any], version_id: int, rows: _BatchRows) -> None:
        """Insert a rated batch's ledger rows and rating changes: one statement per table over arrays
        (fixed texts that psycopg prepares once per connection)."""
        m = rows.matches
        created_at = m[0][7]  # one timestamp for the whole batch
        raw.execute(
            _PG_INSERT_MATCHES,
            (
                version_id,
                created_at,
                [r[0] for r in m],
                [r[1] for r in m],
                [r[2] for r in m],
                [r[3] for r in m],
                [r[4] for r in m],
                [r[5] for r in m],
            ),
        )
        c = rows.changes
        raw.execute(
            _PG_INSERT_CHANGES,
            (version_id, [r[1] for r in c], [r[2] for r in c], [r[3] for r in c], [r[4] for r in c]),
        )

    def _rate_batch(
        self,
        batch: _Batch,
        version: VersionInfo,
        ratings: dict[str, int],
        played: dict[str, int],
        sequences: Sequence[int],
    ) -> _BatchRows:
        """Rate the batch's new matches in order, updating ``ratings`` and ``played`` in place.

        A match the engine refuses (a :class:`SedmaEloError`) gets an error outcome and no row.
        """
        out = _BatchRows()
        state = RatingState(ratings, played)
        created_at = now_text()
        used = 0
        for i in batch.todo:
            sub = batch.subs[i]
            try:
                result = state.rate(sub.match, version.rules)
            except SedmaEloError as exc:
                batch.outcomes[i] = ApplyOutcome("error", error=exc)
                continue
            seq = sequences[used]
            used += 1
            response = self._response_text(sub, seq, version, result)
            state.commit(result)
            for change in result.changes:
                pid = change.player_id
                out.last_seq[pid] = seq
                out.changes.append((version.id, seq, pid, change.rating_before, change.rating_after))
            out.matches.append(
                (seq, sub.match_id, sub.body, sub.body_hash, response, sub.played_at, version.id, created_at)
            )
            batch.outcomes[i] = ApplyOutcome("created", response)
        return out

    def _write_players(
        self,
        raw: Any,
        version_id: int,
        ratings: dict[str, int],
        played: dict[str, int],
        last_seq: dict[str, int],
        known: set[str],
    ) -> None:
        """Store the rating, count and last sequence of every player in ``last_seq``.

        ``raw`` is the DBAPI connection (sqlite3 or psycopg) of the open transaction; ``known``
        players are updated, the others inserted. Players go in id order, so concurrent inserts
        cannot deadlock.
        """
        ordered = sorted(last_seq.items())
        old = [p for p, _ in ordered if p in known]
        new = [p for p, _ in ordered if p not in known]
        if self._pg:  # one statement per kind, over arrays, instead of one per player
            if old:
                columns = ([ratings[p] for p in old], [played[p] for p in old], [last_seq[p] for p in old])
                raw.execute(_PG_UPDATE_PLAYERS, (old, *columns, version_id))
            if new:
                columns = ([ratings[p] for p in new], [played[p] for p in new], [last_seq[p] for p in new])
                raw.execute(_PG_INSERT_PLAYERS, (version_id, new, *columns))
            return
        raw.executemany(
            "UPDATE player_ratings SET rating = ?, matches_played = ?, last_sequence = ?"
            " WHERE version_id = ? AND player_id = ?",
            [(ratings[p], played[p], last_seq[p], version_id, p) for p in old],
        )
        raw.executemany(
            "INSERT INTO player_ratings (version_id, player_id, rating, matches_played, last_sequence)"
            " VALUES (?, ?, ?, ?, ?)",
            [(version_id, p, ratings[p], played[p], last_seq[p]) for p in new],
        )

    # ------------------------------------------------------------------ explanations
    @staticmethod
    def _response_text(sub: Submission, seq: int, version: VersionInfo, result: RatingResult) -> str:
        """The JSON text of :meth:`match_view` for a just-applied match, reusing the canonical body text.

        Byte for byte ``json.dumps`` of the view with ``separators=(",", ":")`` and
        ``ensure_ascii=False``, formatted directly: this runs on every match write.
        """
        changes = ",".join(change_to_json(result, c.player_id) for c in result.changes)
        return (
            f'{{"match_id":{json_string(sub.match_id)},"sequence":{json_scalar(seq)},'
            f'"played_at":{json_scalar(sub.played_at)},"voided":false,"void_reason":null,'
            f'"match":{sub.body},"ratings_version":{{"id":{json_scalar(version.id)},'
            f'"label":{json_string(version.label)},"rules":{json_string(version.rules.label)}}},'
            f'"changes":[{changes}]}}'
        )

    @staticmethod
    def match_view(
        body: dict[str, Any],
        sequence: int,
        played_at: str | None,
        version: VersionInfo,
        result: RatingResult | None,
        voided: bool,
        void_reason: str | None,
    ) -> dict[str, Any]:
        """The JSON answer for one match: the match, its sequence, the version and the explanation."""
        return {
            "match_id": body["match_id"],
            "sequence": sequence,
            "played_at": played_at,
            "voided": voided,
            "void_reason": void_reason,
            "match": body,
            "ratings_version": {"id": version.id, "label": version.label, "rules": version.rules.label},
            "changes": []
            if result is None
            else [change_to_dict(result, c.player_id) for c in result.changes],
        }

    def get_match(self, match_id: str) -> dict[str, Any]:
        """The match as stored, with the explanation of its changes in the active version.

        Raises:
            NotFoundError: no match has this id.
        """
        with self.db.read.connect() as conn:
            row = conn.execute(select(matches).where(matches.c.match_id == match_id)).first()
            if row is None:
                raise NotFoundError(f"match {match_id!r} does not exist")
            version = self._version(conn, self._active_id(conn))
            result = None
            if not row.voided:
                before = {
                    r.player_id: r.rating_before
                    for r in conn.execute(
                        select(rating_changes.c.player_id, rating_changes.c.rating_before).where(
                            rating_changes.c.version_id == version.id,
                            rating_changes.c.sequence == row.sequence,
                        )
                    )
                }
                games = {
                    pid: n
                    for pid, n in conn.execute(
                        select(rating_changes.c.player_id, func.count())
                        .where(
                            rating_changes.c.version_id == version.id,
                            rating_changes.c.player_id.in_(list(before)),
                            rating_changes.c.sequence < row.sequence,
                        )
                        .group_by(rating_changes.c.player_id)
                    )
                }
                result = RatingState(before, games).rate(match_from_body(row.body), version.rules)
        return self.match_view(
            json.loads(row.body),
            row.sequence,
            row.played_at,
            version,
            result,
            bool(row.voided),
            row.void_reason,
        )

    # ------------------------------------------------------------------ reads
    def get_player(self, player_id: str, version_id: int | None = None) -> PlayerRecord:
        """A player's rating in the active (or given) version.

        Raises:
            NotFoundError: the player has no match in that version.
        """
        vid = self.active_id() if version_id is None else version_id
        return _player_record(player_id, vid, self.db.query(_PLAYER_SQL, (vid, player_id)))

    async def get_player_async(self, player_id: str, version_id: int | None = None) -> PlayerRecord:
        """:meth:`get_player` for an event loop: waits for PostgreSQL without blocking the loop."""
        vid = self.active_id() if version_id is None else version_id
        return _player_record(player_id, vid, await self.reader.query(_PLAYER_SQL, (vid, player_id)))

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
        _check_limit(limit)
        if order not in ("asc", "desc"):
            raise ValidationError("order", "must be 'asc' or 'desc'")
        bound = None
        if cursor is not None:
            parts = _decode_cursor(cursor)
            wanted = 1 if order == "asc" else 2
            if (
                len(parts) != wanted
                or not isinstance(parts[0], int)
                or isinstance(parts[0], bool)
                or not 0 <= parts[0] < 2**62  # a bigint on PostgreSQL
                or (order == "desc" and parts[1] != "desc")
            ):
                raise ValidationError("cursor", "is not a cursor returned by this service for this order")
            bound = parts[0]
        with self.db.read.connect() as conn:
            vid = self._active_id(conn)
            exists = conn.execute(
                select(player_ratings.c.player_id).where(
                    player_ratings.c.version_id == vid, player_ratings.c.player_id == player_id
                )
            ).first()
            if exists is None:
                raise NotFoundError(f"player {player_id!r} has no rated match")
            params = (vid, player_id, limit + 1) if bound is None else (vid, player_id, bound, limit + 1)
            rows = conn.exec_driver_sql(_history_sql(order, bound is not None, self._ph), params).all()
        items = [_history_item(r) for r in rows[:limit]]
        nxt = None
        if len(rows) > limit:
            last = rows[limit - 1].sequence
            nxt = _encode_cursor(last) if order == "asc" else _encode_cursor(last, "desc")
        return HistoryPage(player_id, items, nxt)

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
            branch = _history_sql("desc", False, self._ph, player="p.id")
            sql = f"SELECT r.* FROM unnest(%s::text[]) AS p(id) CROSS JOIN LATERAL ({branch}) AS r"
            params = (wanted, vid, n)
        else:
            branch = _history_sql("desc", False, self._ph)
            sql = " UNION ALL ".join(f"SELECT * FROM ({branch}) AS r{i}" for i in range(len(wanted)))
            params = tuple(p for pid in wanted for p in (vid, pid, n))
        with self.db.read.connect() as conn:
            rows = conn.exec_driver_sql(sql, params).all()
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
        rows = self.db.query(
            "SELECT player_id, rating, matches_played FROM player_ratings"
            " WHERE version_id = ? AND player_id >= ? AND player_id < ? ORDER BY player_id LIMIT ?",
            (self.active_id(), prefix, prefix + "\U0010ffff", limit),
        )
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
        vid = self.active_id() if version_id is None else version_id
        columns = "SELECT player_id, rating, matches_played FROM player_ratings WHERE version_id = ?"
        order = " ORDER BY rating DESC, player_id LIMIT ?"
        if cursor is None:
            return vid, 0, columns + order, (vid, limit + 1)
        parts = _decode_cursor(cursor)
        if (
            len(parts) != 3
            or not all(isinstance(p, int) and not isinstance(p, bool) for p in (parts[0], parts[2]))
            or not isinstance(parts[1], str)
            or not MIN_RATING <= parts[0] <= MAX_RATING
            or not 0 <= parts[2] < 2**62
        ):
            raise ValidationError("cursor", "is not a cursor returned by this service")
        rating, pid, rank = parts
        sql = columns + " AND (rating < ? OR (rating = ? AND player_id > ?))" + order
        return vid, rank, sql, (vid, rating, rating, pid, limit + 1)

    def around(self, player_id: str, span: int = 5) -> LeaderboardPage:
        """The player's exact rank with up to ``span`` (0..100) players above and below.

        Raises:
            NotFoundError: the player has no match in the active version.
            ValidationError: ``span`` out of range.
        """
        if not 0 <= span <= 100:
            raise ValidationError("span", "must be within [0, 100]")
        pr = player_ratings.c
        with self.db.read.connect() as conn:
            vid = self._active_id(conn)
            me = conn.execute(
                select(pr.rating, pr.matches_played).where(pr.version_id == vid, pr.player_id == player_id)
            ).first()
            if me is None:
                raise NotFoundError(f"player {player_id!r} has no rated match")
            better = or_(pr.rating > me.rating, and_(pr.rating == me.rating, pr.player_id < player_id))
            worse = or_(pr.rating < me.rating, and_(pr.rating == me.rating, pr.player_id > player_id))
            rank = (
                int(
                    conn.execute(
                        select(func.count()).select_from(player_ratings).where(pr.version_id == vid, better)
                    ).scalar_one()
                )
                + 1
            )
            cols = (pr.player_id, pr.rating, pr.matches_played)
            above = conn.execute(
                select(*cols)
                .where(pr.version_id == vid, better)
                .order_by(pr.rating, pr.player_id.desc())
                .limit(span)
            ).all()
            below = conn.execute(
                select(*cols)
                .where(pr.version_id == vid, worse)
                .order_by(pr.rating.desc(), pr.player_id)
                .limit(span)
            ).all()
        ordered = [*reversed(above), (player_id, me.rating, me.matches_played), *below]
        start = rank - len(above)
        items = [
            {"rank": start + n, "player_id": r[0], "rating": r[1], "matches_played": r[2]}
            for n, r in enumerate(ordered)
        ]
        return LeaderboardPage(items, None, vid)

    def ledger_size(self) -> int:
        """How many matches the ledger holds (voided ones included)."""
        with self.db.read.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(matches)).scalar_one())

    def ledger(self, *, include_voided: bool = False) -> Iterator[tuple[int, Match]]:
        """Every match in sequence order as ``(sequence, match)``.

        ``played_at`` is the posted time, or the time the service applied the match when none was
        posted (a history file needs one).
        """
        with self.db.read.connect() as conn:
            query = select(
                matches.c.sequence, matches.c.body, matches.c.played_at, matches.c.created_at
            ).order_by(matches.c.sequence)
            if not include_voided:
                query = query.where(matches.c.voided.is_(False))
            rows = conn.execute(query).all()
        for row in rows:
            match = match_from_body(row.body)
            stamp = row.played_at or row.created_at
            when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            match = dataclasses.replace(match, played_at=when)
            yield row.sequence, match

    def import_matches(self, items: Iterable[Match], batch: int = 1000) -> ImportReport:
        """Apply matches through the same path as ``POST /v1/matches``, ``batch`` per transaction.

        Matches already in the ledger with the same body count as repeats; a different body under a
        known ``match_id`` is a conflict and is skipped (listed in the report), as are matches the
        engine refuses.
        """
        report = ImportReport()
        pending: list[Submission] = []

        def flush() -> None:
            for sub, outcome in zip(pending, self.apply(pending), strict=True):
                if outcome.status == "created":
                    report.created += 1
                elif outcome.status == "repeat":
                    report.repeated += 1
                else:
                    report.refused.append(f"{sub.match_id}: {outcome.error}")
            pending.clear()

        for match in items:
            pending.append(submission_from_match(match))
            if len(pending) >= batch:
                flush()
        if pending:
            flush()
        return report

    # ------------------------------------------------------------------ admin
    def void(self, match_id: str, reason: str = "") -> dict[str, Any]:
        """Void a match and recompute every version from it on; return the match's view.

        Voiding an already voided match changes nothing.

        Raises:
            NotFoundError: no match has this id.
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            row = conn.execute(
                select(matches.c.sequence, matches.c.voided).where(matches.c.match_id == match_id)
            ).first()
            if row is None:
                raise NotFoundError(f"match {match_id!r} does not exist")
            if not row.voided:
                conn.execute(
                    update(matches)
                    .where(matches.c.sequence == row.sequence)
                    .values(voided=True, void_reason=reason[:500] or None)
                )
                for vid in conn.execute(select(rating_versions.c.id)).scalars().all():
                    # An inactive version holds matches only up to its snapshot: rebuild no further.
                    through = self._through(conn, int(vid))
                    if through >= row.sequence:
                        self._rebuild_from(conn, int(vid), row.sequence, through)
        return self.get_match(match_id)

    def rerate(self, rules: Rules, label: str | None = None, *, activate: bool = True) -> VersionInfo:
        """Replay the whole non-voided ledger under ``rules`` into a new version; optionally activate it.

        Runs in one transaction holding the ledger exclusively: writes wait, reads go on against the
        old active version until the switch commits.
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            vid = self._insert_version(conn, rules, label or rules.label, active=False)
            self._rebuild_from(conn, vid, 0)
            if activate:
                self._switch(conn, vid)
        self._active = None
        return next(v for v in self.versions() if v.id == vid)

    def activate(self, version_id: int) -> VersionInfo:
        """Make ``version_id`` the active version (atomically; the previous one stays readable).

        Raises:
            NotFoundError: no such version.
        """
        with self.db.begin_write() as conn:
            self._lock_ledger(conn)
            self._version(conn, version_id)
            # An inactive version received no new matches: catch it up with the ledger first.
            self._rebuild_from(conn, version_id, self._through(conn, version_id) + 1)
            self._switch(conn, version_id)
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

    def _rebuild_from(self, conn: Connection, vid: int, start: int, end: int | None = None) -> None:
        """Recompute version ``vid`` for every non-voided match with ``start <= sequence <= end``.

        ``end`` (default: the whole ledger) lets a void rebuild an inactive version only as far as
        its snapshot goes (:meth:`_through`); activation catches it up later.
        """
        version = self._version(conn, vid)
        rc, pr = rating_changes.c, player_ratings.c
        # Roll every touched player back to where they stood before ``start``.
        firsts = conn.execute(
            select(rc.player_id, func.min(rc.sequence).label("first"))
            .where(rc.version_id == vid, rc.sequence >= start)
            .group_by(rc.player_id)
        ).all()
        for pid, first in firsts:
            before = conn.execute(
                select(rc.rating_before).where(
                    rc.version_id == vid, rc.player_id == pid, rc.sequence == first
                )
            ).scalar_one()
            earlier = conn.execute(
                select(func.count(), func.max(rc.sequence)).where(
                    rc.version_id == vid, rc.player_id == pid, rc.sequence < start
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

        ratings: dict[str, int] = {}
        played: dict[str, int] = {}
        state = RatingState(ratings, played)
        known: set[str] = set()
        last_seq: dict[str, int] = {}
        rows = conn.execute(
            select(matches.c.sequence, matches.c.body)
            .where(
                matches.c.sequence >= start,
                matches.c.sequence <= (end if end is not None else 2**62),
                matches.c.voided.is_(False),
            )
            .order_by(matches.c.sequence)
        ).all()
        chunk: list[dict[str, Any]] = []
        for row in rows:
            match = match_from_body(row.body)
            missing = [p for p in match.players if p not in ratings and p not in played]
            if missing:
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
                last_seq[change.player_id] = row.sequence
                chunk.append(
                    {
                        "version_id": vid,
                        "sequence": row.sequence,
                        "player_id": change.player_id,
                        "rating_before": change.rating_before,
                        "rating_after": change.rating_after,
                    }
                )
            if len(chunk) >= 5000:
                conn.execute(insert(rating_changes), chunk)
                chunk = []
        if chunk:
            conn.execute(insert(rating_changes), chunk)
        self._write_players(conn.connection.driver_connection, vid, ratings, played, last_seq, known)

    # ------------------------------------------------------------------ verify
    def verify(self) -> VerifyReport:
        """Replay the non-voided ledger with the pure engine for every version and compare.

        Compares each stored rating change (before and after) and each player's final rating and
        match count. The active version must hold the whole non-voided ledger; an inactive version is
        a snapshot and must hold exactly the non-voided matches up to the last one it applied. The
        report lists every difference (at most 100).
        """
        report = VerifyReport()
        with self.db.read.begin() as conn:
            entries = [
                (int(r.sequence), match_from_body(r.body))
                for r in conn.execute(
                    select(matches.c.sequence, matches.c.body)
                    .where(matches.c.voided.is_(False))
                    .order_by(matches.c.sequence)
                )
            ]
            report.matches = len(entries)
            versions = conn.execute(
                select(rating_versions.c.id, rating_versions.c.active).order_by(rating_versions.c.id)
            ).all()
            for vid, active in versions:
                report.versions += 1
                version = self._version(conn, int(vid))
                through = None if active else self._through(conn, int(vid))
                covered = entries if through is None else [e for e in entries if e[0] <= through]
                expected_changes: dict[tuple[int, str], tuple[int, int]] = {}
                state = RatingState()
                ratings, counts = state.ratings, state.games
                for seq, result in replay(covered, version.rules, state):
                    for c in result.changes:
                        expected_changes[(seq, c.player_id)] = (c.rating_before, c.rating_after)
                stored_changes = {
                    (int(r.sequence), r.player_id): (r.rating_before, r.rating_after)
                    for r in conn.execute(select(rating_changes).where(rating_changes.c.version_id == vid))
                }
                stored_players = {
                    r.player_id: (r.rating, r.matches_played)
                    for r in conn.execute(select(player_ratings).where(player_ratings.c.version_id == vid))
                }
                report.players += len(stored_players)
                for key in sorted(set(expected_changes) | set(stored_changes)):
                    if expected_changes.get(key) != stored_changes.get(key):
                        report.mismatches.append(
                            f"version {vid}, sequence {key[0]}, player {key[1]}: stored "
                            f"{stored_changes.get(key)}, replay {expected_changes.get(key)}"
                        )
                for pid in sorted(set(ratings) | set(stored_players)):
                    want = (ratings[pid], counts[pid]) if pid in ratings else None
                    if stored_players.get(pid) != want:
                        report.mismatches.append(
                            f"version {vid}, player {pid}: stored (rating, matches) "
                            f"{stored_players.get(pid)}, replay {want}"
                        )
        del report.mismatches[100:]
        return report


_HISTORY_SELECT = (
    "SELECT rc.player_id, rc.sequence, rc.rating_before, rc.rating_after, m.match_id, m.played_at"
    " FROM rating_changes rc JOIN matches m ON m.sequence = rc.sequence"
    " WHERE rc.version_id = {ph} AND rc.player_id = {player}"
)


class WriterSession:
    """One writer's database connection, held across batches: no pool checkout (or ping) per batch.

    :meth:`apply` has the contract of :meth:`Ledger.apply`. One session per thread; get one from
    :meth:`Ledger.writer_session`, which closes it.
    """

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._conn: PoolProxiedConnection | None = None

    def close(self) -> None:
        """Return the connection to the pool."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def apply(self, submissions: Sequence[Submission]) -> list[ApplyOutcome]:
        """See :meth:`Ledger.apply`."""
        if not submissions:
            return []
        try:
            return self._apply_with_retry(submissions)
        except Exception:
            if len(submissions) == 1:
                raise
        outcomes = []
        for sub in submissions:
            try:
                outcomes.append(self._apply_with_retry([sub])[0])
            except Exception as exc:  # only this match fails (answered 500); the others stand
                outcomes.append(ApplyOutcome("error", failure=exc))
        return outcomes

    def _apply_with_retry(self, submissions: Sequence[Submission]) -> list[ApplyOutcome]:
        for attempt in range(_RETRIES):
            try:
                return self._apply_once(submissions)
            except (DBAPIError, psycopg.Error, sqlite3.Error, _TryAgain) as exc:
                if attempt == _RETRIES - 1 or not _is_retryable(exc):
                    raise
                _log.info("retrying a batch of %d: %s", len(submissions), str(exc).splitlines()[0])
                time.sleep(0.002 * (attempt + 1))
        raise AssertionError("unreachable")

    def _apply_once(self, subs: Sequence[Submission]) -> list[ApplyOutcome]:
        if self._conn is None:
            self._conn = self.ledger.db.write.raw_connection()
        raw = self._conn.driver_connection
        if isinstance(raw, sqlite3.Connection):
            return self.ledger._apply_sqlite(raw, subs)
        assert isinstance(raw, psycopg.Connection)
        try:
            return self.ledger._apply_pg(raw, subs)
        except psycopg.Error as exc:
            if raw.broken:  # e.g. the server restarted: a new connection may well succeed
                self._conn.invalidate()
                self._conn = None
                raise _TryAgain("the database connection was lost") from exc
            raise


_PLAYER_SQL = (
    "SELECT rating, matches_played, last_sequence FROM player_ratings WHERE version_id = ? AND player_id = ?"
)


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
        nxt = _encode_cursor(last["rating"], last["player_id"], last["rank"])
    return LeaderboardPage(items, nxt, version_id)


def _history_sql(order: HistoryOrder, bounded: bool, ph: str, player: str | None = None) -> str:
    """One player's rating changes in ``order``, after (asc) or before (desc) a sequence if ``bounded``.

    The one query behind :meth:`Ledger.player_history` and :meth:`Ledger.recent_changes`: a range of
    the ``(version_id, player_id, sequence)`` index, read forwards or backwards. Parameters, with
    ``ph`` the driver's placeholder: version id, player id (unless ``player`` names a column to
    match instead), [bound,] limit. Plain SQL because building the equivalent SQLAlchemy statement
    for 50 players cost more than running it.
    """
    sql = _HISTORY_SELECT.format(ph=ph, player=player or ph)
    if order == "asc":
        return sql + (f" AND rc.sequence > {ph}" if bounded else "") + f" ORDER BY rc.sequence LIMIT {ph}"
    return sql + (f" AND rc.sequence < {ph}" if bounded else "") + f" ORDER BY rc.sequence DESC LIMIT {ph}"


def _history_item(row: Any) -> dict[str, Any]:
    """A history row in its JSON form."""
    return {
        "sequence": row.sequence,
        "match_id": row.match_id,
        "played_at": row.played_at,
        "rating_before": row.rating_before,
        "rating_after": row.rating_after,
        "delta": row.rating_after - row.rating_before,
    }


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise ValidationError("limit", f"must be within [1, {MAX_PAGE}]")
