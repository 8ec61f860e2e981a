"""The ledger's row format, in one place: a match's facts as columns and back, players by integer key.

A ledger row (``matches``) stores the facts of a match, not its text: the match id, the SHA-256 of
its canonical body (32 bytes), ``played_at`` and ``created_at`` as integer microseconds since
1970-01-01 UTC, the winner as a small integer, the players as keys of ``players`` in four slots
(``a1``, ``b1``; ``a2``, ``b2`` in a team match) and each slot's four counts as integer columns
(NULL for an empty slot). :func:`submission_of` decodes a row back into the :class:`Submission`
whose canonical text hashes to the stored hash (tested for every form and statistic).

Every module that reads or writes ledger rows goes through here: :data:`MATCH_FROM` /
:data:`MATCH_COLUMNS` select a row with its players' ids, :func:`match_of` and
:func:`submission_of` decode it, :func:`fact_values` encodes one, and :func:`intern_sqlite` /
:data:`PG_INTERN` give players their keys.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from ...core.model import Match, PlayerStats, Winner
from ...storage.schema import MATCH_SLOTS, STAT_NAMES
from ..payload import Submission

__all__ = [
    "FACT_COLUMNS",
    "MATCH_COLUMNS",
    "MATCH_FROM",
    "PG_INTERN",
    "STAT_COLUMNS",
    "WINNER_CODES",
    "fact_values",
    "from_micros",
    "intern_sqlite",
    "keys_of",
    "match_of",
    "micros",
    "now_micros",
    "stored_hash",
    "submission_of",
]

#: The winner's code in ``matches.winner``.
WINNER_CODES = {"a": 0, "b": 1, "draw": 2}
_WINNERS: tuple[Winner, ...] = ("a", "b", "draw")
#: The count columns, slot by slot (``a1_bad_moves``, ..., ``b2_won_by_4_and_last``).
STAT_COLUMNS = tuple(f"{slot}_{name}" for slot in MATCH_SLOTS for name in STAT_NAMES)
#: The columns :func:`fact_values` fills, in its order (the writers add sequence, version and times).
FACT_COLUMNS = ("match_id", "body_hash", "played_at", "winner", *MATCH_SLOTS, *STAT_COLUMNS)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_NAIVE_EPOCH = datetime(1970, 1, 1)

#: The ledger joined with its players' ids: select :data:`MATCH_COLUMNS` (then anything of ``m``)
#: ``FROM`` this, and decode the first ``len(MATCH_COLUMNS)`` values with :func:`match_of`.
MATCH_FROM = (
    "matches m JOIN players pa1 ON pa1.id = m.a1 LEFT JOIN players pa2 ON pa2.id = m.a2"
    " JOIN players pb1 ON pb1.id = m.b1 LEFT JOIN players pb2 ON pb2.id = m.b2"
)
#: What :func:`match_of` decodes: sequence, match id, played_at, winner, the four ids, their four
#: keys (:func:`keys_of`), the counts.
MATCH_COLUMNS = (
    "m.sequence, m.match_id, m.played_at, m.winner, pa1.player_id, pa2.player_id, pb1.player_id,"
    " pb2.player_id, m.a1, m.a2, m.b1, m.b2, " + ", ".join(f"m.{c}" for c in STAT_COLUMNS)
)
#: How many values of a row :func:`match_of` reads.
MATCH_WIDTH = 12 + len(STAT_COLUMNS)

#: PostgreSQL: intern the players of an array (sorted, so concurrent writers take locks in one order).
PG_INTERN = (
    "INSERT INTO players (player_id) SELECT u.p FROM unnest(CAST(%b AS text[])) AS u(p) ORDER BY u.p"
    " ON CONFLICT (player_id) DO NOTHING"
)


def micros(text: str | None) -> int | None:
    """A canonical time text (``...Z``) as integer microseconds since 1970-01-01 UTC."""
    if text is None:
        return None
    return (datetime.fromisoformat(text) - _EPOCH) // _MICRO


def from_micros(value: int | None) -> str | None:
    """The canonical time text of :func:`micros`'s integer (the text the submission carried):
    :func:`~sedma_elo.service.payload.time_text`'s text of that instant, byte for byte
    (tests/service/test_time_text.py checks every instant of years 1 to 9999).

    Written from a naive time in UTC with ``Z`` appended: converting an aware time to UTC and
    replacing its ``+00:00``, as ``time_text`` must for any offset, took 1.5x as long, 50 times
    in a history answer.
    """
    if value is None:
        return None
    utc = _NAIVE_EPOCH + value * _MICRO
    return utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds") + "Z"


def now_micros() -> int:
    """The current time as :func:`micros` stores it."""
    return (datetime.now(UTC) - _EPOCH) // _MICRO


def stored_hash(value: bytes | memoryview) -> str:
    """A stored body hash as the hex text :attr:`Submission.body_hash` holds."""
    return bytes(value).hex()


def fact_values(sub: Submission, key: Callable[[str], Any]) -> tuple[Any, ...]:
    """The values of :data:`FACT_COLUMNS` for ``sub``; ``key`` maps a player id to its slot's value
    (its integer key, or the id itself where the SQL looks the key up)."""
    m = sub.match
    slots = (*_pair(m.team_a), *_pair(m.team_b))
    counts: list[int | None] = []
    for pid in slots:
        counts.extend(m.stats_of(pid).key() if pid is not None else (None, None, None, None))
    return (
        sub.match_id,
        bytes.fromhex(sub.body_hash),
        micros(sub.played_at),
        WINNER_CODES[m.winner],
        *(None if pid is None else key(pid) for pid in slots),
        *counts,
    )


def _pair(team: tuple[str, ...]) -> tuple[str, str | None]:
    return (team[0], team[1] if len(team) == 2 else None)


def match_of(row: Sequence[Any]) -> tuple[int, Match, str | None]:
    """Decode a row selected with :data:`MATCH_COLUMNS`: ``(sequence, match, played_at text)``.

    The match is built as :func:`~sedma_elo.service.payload.match_from_body` builds it (no
    ``played_at`` on the :class:`Match`); the stored facts were validated when they came in.
    """
    seq, match_id, played, winner = row[0], row[1], row[2], _WINNERS[row[3]]
    ids = row[4:8]
    counts = row[12:MATCH_WIDTH]
    stats = {pid: PlayerStats(*counts[4 * i : 4 * i + 4]) for i, pid in enumerate(ids) if pid is not None}
    if ids[1] is None:
        match = Match.single(ids[0], ids[2], winner, stats[ids[0]], stats[ids[2]], match_id=match_id)
    else:
        match = Match((ids[0], ids[1]), (ids[2], ids[3]), winner, stats, match_id)
    return int(seq), match, from_micros(played)


def keys_of(row: Sequence[Any]) -> dict[str, int]:
    """The key of each player of a row selected with :data:`MATCH_COLUMNS`, by player id."""
    return {pid: int(key) for pid, key in zip(row[4:8], row[8:12], strict=True) if pid is not None}


def submission_of(row: Sequence[Any]) -> tuple[int, Submission]:
    """Decode a row selected with :data:`MATCH_COLUMNS` into ``(sequence, submission)``: the match
    with its canonical text and hash, equal to those of the submission that stored it."""
    seq, match, played_at = match_of(row)
    return seq, Submission(match, played_at)


def intern_sqlite(raw: sqlite3.Connection, player_ids: Iterable[str]) -> dict[str, int]:
    """The key of each player id in ``players``, adding the ids not seen before (SQLite)."""
    wanted = sorted(set(player_ids))
    keys: dict[str, int] = {}
    for start in range(0, len(wanted), 500):  # SQLite allows 999 parameters per statement
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        keys.update(raw.execute(f"SELECT player_id, id FROM players WHERE player_id IN ({marks})", chunk))
    new = [pid for pid in wanted if pid not in keys]
    for pid in new:
        cursor = raw.execute("INSERT INTO players (player_id) VALUES (?)", (pid,))
        assert cursor.lastrowid is not None
        keys[pid] = cursor.lastrowid
    return keys
