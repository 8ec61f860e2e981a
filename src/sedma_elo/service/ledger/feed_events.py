"""Writing the change feed: one ``change_events`` row per applied match, void or version switch.

This is the write paths' only hook into the feed (and so into webhook delivery, whose durable outbox
the same table is): :func:`append_match_events` is called by both batch write paths inside their
transaction, :func:`append_events` by void, re-rate and activate inside theirs. An event therefore
commits together with the change it describes, or not at all.

Sequences are dense and in commit order: the insert takes ``max(sequence) + 1`` under a lock held
until the commit (SQLite's write lock; on PostgreSQL a transaction-level advisory lock named after
the table, which every path appending to the feed takes). A reader that has seen
sequence ``n`` can never later find a new event below ``n``, which a sequence taken from a
PostgreSQL ``SEQUENCE`` would not promise: two writers' transactions may commit in the other order
than they drew their numbers. The lock is taken by the last statements before the commit, so it is
held for about the commit alone.

Why an advisory lock and not ``LOCK TABLE change_events IN EXCLUSIVE MODE`` (until 2026-12-07): a
table lock in that mode also conflicts with ``VACUUM``, ``ANALYZE`` and ``CREATE INDEX
CONCURRENTLY`` of the table. Under a steady write load autovacuum, which asks for its lock without
waiting, skipped the table ("skipping vacuum of "change_events" --- lock not available" in the
server's log), and a vacuum that waits for its lock (a manual one, or the anti-wraparound vacuum
that comes at the latest every ``autovacuum_freeze_max_age`` transactions) held every write batch
until it ended. The advisory lock serialises the appends alike and conflicts with neither
(docs/service-measurements.md, "The feed's lock and the vacuum").

The stored ``data`` is the item's JSON text without its sequence (unknown until the insert);
:func:`item_text` puts it in front. A ``match`` event, one a ledger row and so most of the table, is
stored compact instead: a JSON array of its values without the keys (:func:`match_event`), which
:func:`item_text` expands to the same item text; rows stored as objects (before 2026-12-01) are
read as they are.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from ...core._jsontext import json_scalar, json_string
from ...storage.schema import player_ratings, players, rating_changes, rating_versions
from .batch import BatchRows
from .pg_arrays import Int4Array, TextArray
from .types import VersionInfo, now_text

__all__ = [
    "Event",
    "Voided",
    "append_events",
    "append_match_events",
    "copy_events",
    "item_text",
    "match_event",
    "match_events",
    "match_player",
    "match_ratings",
    "player_json",
    "record_switch",
    "record_void",
    "rerate_event",
    "touched_ratings",
    "void_event",
]

#: ``(kind, version id, data text, created_at)``: one row of ``change_events`` before its sequence.
Event = tuple[str, int, str, str]

_SQLITE_INSERT = (
    "INSERT INTO change_events (sequence, kind, version_id, data, created_at)"
    " VALUES ((SELECT coalesce(max(sequence), 0) + 1 FROM change_events), ?, ?, ?, ?)"
)
#: The feed's lock on PostgreSQL, held until the commit: an advisory lock keyed on a constant of this
#: project's (chosen at random) and the table's OID, so that two ledgers in one database (in two
#: schemas) each have their own.
_PG_LOCK = "SELECT pg_advisory_xact_lock(2063917414, CAST(CAST('change_events'::regclass AS oid) AS integer))"
_PG_TOP = "SELECT coalesce(max(sequence), 0) FROM change_events"
_PG_COPY = "COPY change_events (sequence, kind, version_id, data, created_at) FROM STDIN (FORMAT BINARY)"
_PG_COPY_TYPES = ("int8", "text", "int4", "text", "text")
_PG_INSERT = (
    "INSERT INTO change_events (sequence, kind, version_id, data, created_at)"
    " SELECT t.top + u.n, u.kind, u.version_id, u.data, u.created_at"
    " FROM (SELECT coalesce(max(sequence), 0) AS top FROM change_events) AS t,"
    " unnest(CAST(%b AS text[]), CAST(%b AS integer[]), CAST(%b AS text[]), CAST(%b AS text[]))"
    " WITH ORDINALITY AS u(kind, version_id, data, created_at, n)"
)


def item_text(sequence: int, data: str) -> str:
    """The JSON text of a feed item: ``{"sequence": n, ...data}`` (``data`` is a JSON object's text,
    or a compact ``match`` event's array, expanded to that object first)."""
    if data.startswith("["):
        data = _expand_match(data)
    return f'{{"sequence":{sequence},{data[1:]}'


def _match_object(
    version_id: int, match_id: str, sequence: int, played_at: str | None, players: str, created_at: str
) -> str:
    """The JSON object text of a ``match`` item without its sequence (``players``: the entries' text)."""
    return (
        f'{{"kind":"match","version_id":{version_id},"match_id":{json_string(match_id)},'
        f'"match_sequence":{sequence},"played_at":{json_scalar(played_at)},'
        f'"players":[{players}],"created_at":"{created_at}"}}'
    )


def _expand_match(data: str) -> str:
    """The object text of a compact ``match`` event (:func:`match_event`'s array)."""
    created_at, version_id, match_id, sequence, played_at, *players = json.loads(data)
    entries = ",".join(player_json(pid, before, after) for pid, before, after in players)
    return _match_object(version_id, match_id, sequence, played_at, entries, created_at)


def match_ratings(data: str) -> tuple[int, list[tuple[str, int, int | None]]]:
    """The version and the ``(player id, rating before, rating after)`` of a stored ``match``
    event's ``data``, compact (:func:`match_event`) or an object row stored before 2026-12-01."""
    value = json.loads(data)
    if isinstance(value, list):
        _, version_id, _, _, _, *players = value
        return int(version_id), [(str(pid), int(before), after) for pid, before, after in players]
    return int(value["version_id"]), [
        (str(p["player_id"]), int(p["rating_before"]), p["rating_after"]) for p in value["players"]
    ]


def player_json(player_id: str, before: int, after: int | None) -> str:
    """One player's entry of an event: id, rating before and after, delta (null without an after)."""
    delta = "null" if after is None else str(after - before)
    return (
        f'{{"player_id":{json_string(player_id)},"rating_before":{before},'
        f'"rating_after":{json_scalar(after)},"delta":{delta}}}'
    )


def match_player(player_id: str, before: int, after: int) -> str:
    """One player's entry of a stored ``match`` event, compact: ``["id",before,after]`` (the item's
    entry, :func:`player_json`, adds the keys and the delta)."""
    return f"[{json_string(player_id)},{before},{after}]"


def match_events(version_id: int, rows: BatchRows) -> list[Event]:
    """One ``match`` event per new ledger row of a batch rated in ``version_id``, with each player's
    before/after/delta."""
    players: dict[int, list[str]] = {}
    for seq, pid, before, after in rows.changes:
        players.setdefault(seq, []).append(match_player(pid, before, after))
    created_at = now_text()
    return [
        match_event(version_id, sub.match_id, seq, sub.played_at, players.get(seq, ()), created_at)
        for seq, sub in rows.matches
    ]


def match_event(
    version_id: int,
    match_id: str,
    sequence: int,
    played_at: str | None,
    players: Sequence[str],
    created_at: str,
) -> Event:
    """The ``match`` event of one new ledger row; ``players`` are :func:`match_player` texts in the
    order of the match's rating changes (the one format, shared by the batch writers and import).

    Stored compact, as the JSON array ``[created_at, version_id, match_id, match_sequence,
    played_at, *players]``: the object's keys and each player's delta were 60% of its text, and
    this table held 45% of a 10 M-match ledger (docs/service.md, "The ledger at scale").
    """
    entries = "," + ",".join(players) if players else ""
    data = (
        f'["{created_at}",{version_id},{json_string(match_id)},{sequence},{json_scalar(played_at)}{entries}]'
    )
    return ("match", version_id, data, created_at)


@dataclass(frozen=True, slots=True)
class Voided:
    """A match being voided: the active version, the match and the reason."""

    version_id: int
    match_id: str
    match_sequence: int
    played_at: str | None
    reason: str | None


def void_event(voided: Voided, before: Mapping[str, int], after: Mapping[str, int]) -> Event:
    """The ``void`` event: every player of ``before`` whose current rating the void changed.

    ``before``/``after`` are current ratings in the active version before and after the rebuild; a
    player missing from ``after`` has no rated match left (``rating_after`` and ``delta`` null).
    """
    changed = [
        player_json(pid, rating, after.get(pid))
        for pid, rating in sorted(before.items())
        if after.get(pid) != rating
    ]
    created_at = now_text()
    data = (
        f'{{"kind":"void","version_id":{voided.version_id},"match_id":{json_string(voided.match_id)},'
        f'"match_sequence":{voided.match_sequence},"played_at":{json_scalar(voided.played_at)},'
        f'"reason":{json_scalar(voided.reason)},"players":[{",".join(changed)}],"created_at":"{created_at}"}}'
    )
    return ("void", voided.version_id, data, created_at)


def rerate_event(version_id: int, previous_version_id: int, label: str, rules: str) -> Event:
    """The ``rerate`` event: ``version_id`` (rated under ``rules``) is now the active version."""
    created_at = now_text()
    data = (
        f'{{"kind":"rerate","version_id":{version_id},"previous_version_id":{previous_version_id},'
        f'"label":{json_string(label)},"rules":{json_string(rules)},"created_at":"{created_at}"}}'
    )
    return ("rerate", version_id, data, created_at)


def append_events(raw: Any, events: Sequence[Event]) -> None:
    """Insert ``events`` into ``change_events`` in order, in ``raw``'s open transaction.

    ``raw`` is the transaction's DBAPI connection: sqlite3 (the write lock is held) or psycopg (the
    feed's lock is taken here, and also works in pipeline mode).
    """
    if not events:
        return
    if isinstance(raw, sqlite3.Connection):
        raw.executemany(_SQLITE_INSERT, events)
        return
    raw.execute(_PG_LOCK)
    kinds, versions, data, created = zip(*events, strict=True)
    raw.execute(_PG_INSERT, (TextArray(kinds), Int4Array(versions), TextArray(data), TextArray(created)))


def copy_events(raw: Any, events: Sequence[Event]) -> None:
    """:func:`append_events` by a binary ``COPY`` on PostgreSQL (not in pipeline mode: the bulk
    import's many rows), the same rows; on SQLite the same ``executemany``."""
    if not events or isinstance(raw, sqlite3.Connection):
        append_events(raw, events)
        return
    raw.execute(_PG_LOCK)
    top = int(raw.execute(_PG_TOP).fetchone()[0])
    with raw.cursor() as cur, cur.copy(_PG_COPY) as copy:
        copy.set_types(_PG_COPY_TYPES)
        for n, event in enumerate(events, top + 1):
            copy.write_row((n, *event))


def append_match_events(raw: Any, version_id: int, rows: BatchRows) -> None:
    """The write paths' hook: :func:`append_events` of :func:`match_events` (nothing for no new row)."""
    if rows.matches:
        append_events(raw, match_events(version_id, rows))


# ----------------------------------------------------------------- void, re-rate and activate
def touched_ratings(conn: Connection, version_id: int, start: int) -> dict[str, int]:
    """Current ratings in ``version_id`` of every player with a change at or after ``start``.

    Read by a void before its rebuild: these are the only ratings the rebuild can change.
    """
    rc, pr = rating_changes.c, player_ratings.c
    touched = (
        select(players.c.player_id)
        .join_from(rating_changes, players, players.c.id == rc.player_key)
        .where(rc.version_id == version_id, rc.sequence >= start)
        .distinct()
    )
    rows = conn.execute(
        select(pr.player_id, pr.rating).where(pr.version_id == version_id, pr.player_id.in_(touched))
    )
    return {pid: rating for pid, rating in rows}


def record_void(conn: Connection, voided: Voided, before: Mapping[str, int]) -> None:
    """Append the ``void`` event, comparing ``before`` (:func:`touched_ratings`) with the ratings now."""
    pr = player_ratings.c
    ids = sorted(before)
    after: dict[str, int] = {}
    for start in range(0, len(ids), 500):  # SQLite takes at most 999 parameters per statement
        chunk = ids[start : start + 500]
        for pid, rating in conn.execute(
            select(pr.player_id, pr.rating).where(pr.version_id == voided.version_id, pr.player_id.in_(chunk))
        ):
            after[pid] = rating
    event = void_event(voided, before, after)
    append_events(conn.connection.driver_connection, [event])


def active_or_none(conn: Connection) -> int | None:
    """The active version's id in ``conn``'s transaction, or None when there is none yet."""
    vid = conn.execute(select(rating_versions.c.id).where(rating_versions.c.active)).scalar()
    return None if vid is None else int(vid)


def record_switch(conn: Connection, version: VersionInfo, previous: int | None) -> None:
    """Append the ``rerate`` event when ``version`` replaced another as the active version."""
    if previous is not None and previous != version.id:
        event = rerate_event(version.id, previous, version.label, version.rules.label)
        append_events(conn.connection.driver_connection, [event])
