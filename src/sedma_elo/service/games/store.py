"""The ``games`` table: stored game records and their analysis jobs, on SQLite and PostgreSQL.

On PostgreSQL :meth:`GameStore.submit` stores a checked game as ``queued`` and defers its
procrastinate job in the same transaction (:mod:`.queue`); the job's worker
:meth:`~GameStore.take`\\ s the game. On SQLite the game row is its own job: a worker
:meth:`~GameStore.claim`\\ s
the oldest queued game (or one whose lease ran out: its worker died) by an update in one
transaction under the database write lock. The claim carries a random token and a lease;
only the holder of the current token can finish the job. The match itself is applied through the
ledger (by the same ``match_id``), whose exactly-once rule makes a job finished twice (a worker
killed between the ledger's commit and :meth:`~GameStore.finish`) apply nothing twice.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from ...errors import ConflictError, NotFoundError
from ...storage import Database
from ...storage.schema import games, matches
from ..leases import claim_row
from ..ledger.types import now_text
from .payload import GameSubmission

__all__ = [
    "Claim",
    "GameRow",
    "GameStatus",
    "GameStore",
    "SubmitOutcome",
    "pending_game_error",
]

GameStatus = Literal["queued", "analysing", "applied", "failed"]
#: Statuses a game still waits in: the analysis backlog.
PENDING: tuple[GameStatus, ...] = ("queued", "analysing")


@dataclass(frozen=True, slots=True)
class GameRow:
    """A stored game: its request, its status and, once analysed, its analysis (a dict)."""

    match_id: str
    played_at: str | None
    status: GameStatus
    reason: str | None
    record: dict[str, Any]
    analysis: dict[str, Any] | None
    attempts: int
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    """``created`` (stored and queued now) or ``repeat`` (the same body was stored before)."""

    status: Literal["created", "repeat"]
    game: GameRow


@dataclass(frozen=True, slots=True)
class Claim:
    """A job held by one worker until ``lease_until`` (epoch seconds)."""

    match_id: str
    played_at: str | None
    body: str
    token: str
    attempt: int
    lease_until: float


def _row(r: Any) -> GameRow:
    body = json.loads(r.body)
    return GameRow(
        r.match_id,
        r.played_at,
        r.status,
        r.reason,
        body["record"],
        json.loads(r.analysis) if r.analysis is not None else None,
        r.attempts,
        r.created_at,
        r.updated_at,
    )


def _lease_values(token: str, row: Any, lease: float, now: float) -> dict[str, Any]:
    """What a claim writes on the game of ``row``: ``analysing``, its token and lease, one more attempt."""
    return {
        "status": "analysing",
        "claim": token,
        "lease_until": now + lease,
        "attempts": int(row.attempts) + 1,
        "updated_at": now_text(),
    }


def _claim_of(row: Any, token: str, lease: float, now: float) -> Claim:
    return Claim(row.match_id, row.played_at, row.body, token, int(row.attempts) + 1, now + lease)


def pending_game_error(match_id: str) -> ConflictError:
    """The refusal of a match posted with the id of a game waiting for its analysis."""
    return ConflictError(
        f"match_id: {match_id!r} is the id of a game record waiting for its analysis (POST /v1/games;"
        f" GET {_status_path(match_id)}); its match is applied from the record"
    )


def _status_path(match_id: str) -> str:
    from urllib.parse import quote

    return f"/v1/games/{quote(match_id, safe='')}"


class GameStore:
    """Games and their jobs in ``db`` (see the module docstring for the guarantees)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ the API's side
    def submit(self, game: GameSubmission) -> SubmitOutcome:
        """Store ``game`` as queued, or recognise a repeat.

        Raises:
            ConflictError: the ``match_id`` was used for another record (or another time), or for a
                match posted with its statistics (``POST /v1/matches``).
        """
        for _ in range(2):  # a concurrent insert of the same id: read it back the second time
            with self.db.begin_write() as conn:
                found = conn.execute(select(games).where(games.c.match_id == game.match_id)).first()
                if found is not None:
                    if found.body_hash != game.body_hash:
                        raise ConflictError(
                            f"match_id {game.match_id!r} was already used for a different game "
                            "(another record or another played_at)"
                        )
                    return SubmitOutcome("repeat", _row(found))
                taken = conn.execute(
                    select(matches.c.sequence).where(matches.c.match_id == game.match_id)
                ).first()
                if taken is not None:
                    raise ConflictError(
                        f"match_id {game.match_id!r} is already used by a match posted with its statistics"
                    )
                now = now_text()
                try:
                    conn.execute(
                        insert(games).values(
                            match_id=game.match_id,
                            body=game.body,
                            body_hash=game.body_hash,
                            played_at=game.played_at,
                            status="queued",
                            attempts=0,
                            created_at=now,
                            updated_at=now,
                        )
                    )
                except IntegrityError:
                    continue
                if self.db.dialect == "postgresql":  # the job, committed with the row (queue.py)
                    from .queue import defer_in

                    defer_in(conn, game.match_id)
                row = conn.execute(select(games).where(games.c.match_id == game.match_id)).one()
                return SubmitOutcome("created", _row(row))
        raise AssertionError("unreachable: the second attempt sees the stored row")  # pragma: no cover

    def get(self, match_id: str) -> GameRow:
        """The stored game.

        Raises:
            NotFoundError: no game has this id.
        """
        with self.db.read.connect() as conn:
            row = conn.execute(select(games).where(games.c.match_id == match_id)).first()
        if row is None:
            raise NotFoundError(f"game {match_id!r} does not exist")
        return _row(row)

    def find(self, match_id: str) -> GameRow | None:
        """The stored game, or ``None``."""
        try:
            return self.get(match_id)
        except NotFoundError:
            return None

    def backlog(self) -> int:
        """Games waiting for their analysis or being analysed."""
        with self.db.read.connect() as conn:
            return int(
                conn.execute(
                    select(func.count()).select_from(games).where(games.c.status.in_(PENDING))
                ).scalar_one()
            )

    # ------------------------------------------------------------------ the workers' side
    def claim(self, lease: float, now: float | None = None) -> Claim | None:
        """Take the oldest queued game, or one whose lease ran out, for ``lease`` seconds (SQLite's queue).

        ``None`` when there is none. Each claim gets a new token and counts an attempt.
        """
        now = time.time() if now is None else now
        g = games.c
        token = secrets.token_hex(16)
        with self.db.begin_write() as conn:
            row = claim_row(
                conn,
                games,
                [g.match_id, g.played_at, g.body, g.attempts],
                or_(g.status == "queued", and_(g.status == "analysing", g.lease_until < now)),
                lambda found: _lease_values(token, found, lease, now),
                order_by=[g.created_at, g.match_id],
            )
        return None if row is None else _claim_of(row, token, lease, now)

    def take(self, match_id: str, lease: float) -> Claim | None:
        """Claim game ``match_id`` for its queue job (PostgreSQL's queue: procrastinate runs the job).

        ``None`` when the game is finished (``applied`` or ``failed``) or unknown. The job's lock
        keeps two workers from holding one game; a new claim replaces a dead worker's.
        """
        g = games.c
        token, now = secrets.token_hex(16), time.time()
        with self.db.begin_write() as conn:
            row = conn.execute(
                select(g.match_id, g.played_at, g.body, g.attempts)
                .where(g.match_id == match_id, g.status.in_(PENDING))
                .with_for_update()
            ).first()
            if row is None:
                return None
            conn.execute(
                update(games).where(g.match_id == match_id).values(**_lease_values(token, row, lease, now))
            )
        return _claim_of(row, token, lease, now)

    def renew(self, claim: Claim, lease: float) -> bool:
        """Extend the lease of ``claim``; ``False`` when it is no longer the current claim."""
        g = games.c
        with self.db.begin_write() as conn:
            done = conn.execute(
                update(games)
                .where(g.match_id == claim.match_id, g.claim == claim.token, g.status == "analysing")
                .values(lease_until=time.time() + lease)
            )
        return bool(done.rowcount)

    def finish(
        self,
        claim: Claim,
        status: GameStatus,
        *,
        analysis: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> bool:
        """End the job of ``claim`` with ``status`` (``applied``, ``failed``, or ``queued`` to retry).

        ``False`` (and nothing changed) when another worker has claimed the game since.
        """
        g = games.c
        values: dict[str, Any] = {"status": status, "reason": reason, "claim": None, "lease_until": None}
        values["updated_at"] = now_text()
        if analysis is not None:
            values["analysis"] = json.dumps(analysis, separators=(",", ":"), ensure_ascii=False)
        with self.db.begin_write() as conn:
            done = conn.execute(
                update(games).where(g.match_id == claim.match_id, g.claim == claim.token).values(**values)
            )
        return bool(done.rowcount)
