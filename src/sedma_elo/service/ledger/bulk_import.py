"""Bulk import: a whole history file applied in one transaction, rated by the batch kernel.

Contract (``sedma-elo import``, :meth:`Ledger.import_history`): the stored rows are those that
posting the file's matches one by one to ``POST /v1/matches`` would write, in file order (ledger
rows in the format of :mod:`.rows`, players interned, rating changes, player ratings, one ``match``
event a match in the change feed, as :mod:`.feed_events` formats it), except the times they were
written at. Exactly once: a match already in the ledger with the same canonical body counts as
repeated and changes nothing; one with a different body refuses the whole file (a
:class:`~sedma_elo.errors.HistoryError` naming its line), unless ``skip_bad``, which leaves it out
and reports it. Nothing is stored for a refused file.

How: the whole import holds the ledger exclusively (SQLite's write lock, ``LOCK TABLE matches IN
EXCLUSIVE MODE`` on PostgreSQL, which readers pass), so the new matches take consecutive
sequences. The ratings come from the one rating core: the numba batch kernel
(:mod:`sedma_elo.batch.kernel`, the mirror of :mod:`sedma_elo.core.fold`) for one-against-one
files, the fold itself for team matches, both started from the players' stored standing. The
database only stores the numbers: ``COPY`` on PostgreSQL, ``executemany`` on SQLite, in chunks of
:data:`CHUNK` rows inside the one transaction.
"""

from __future__ import annotations

import contextlib
import gc
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import psycopg

from ...batch.history import HistoryArrays, LinedMatches
from ...core.fold import RatingState
from ...core.rules import Rules
from ...errors import HistoryError, NotFoundError, SedmaEloError
from ...storage.schema import MATCH_SLOTS
from .base import LedgerBase
from .bulk import Int64Array, write_changes
from .feed_events import append_events, match_event, player_json
from .import_rows import ImportRows, import_rows, located
from .rows import FACT_COLUMNS, PG_INTERN, intern_sqlite, micros, now_micros
from .sql import SQLITE_INSERT_MATCHES
from .types import ImportReport, VersionInfo, now_text
from .write_pg import write_players_pg
from .write_sqlite import write_players_sqlite

__all__ = ["CHUNK", "Progress", "bulk_import"]

#: Rows per executemany / COPY chunk (and per progress step).
CHUNK = 50_000
_WINNERS = ("a", "b", "draw")
_MATCH_COLUMNS = f"sequence, {', '.join(FACT_COLUMNS)}, version_id, voided, void_reason, created_at"
# Binary COPY: the server converts no text (its types in the column order, for set_types).
_PG_COPY_MATCHES = f"COPY matches ({_MATCH_COLUMNS}) FROM STDIN (FORMAT BINARY)"
_PG_MATCH_TYPES = (
    ["int8", "text", "bytea", "int8", "int2"]
    + ["int4"] * (len(MATCH_SLOTS) * 5)
    + ["int4", "bool", "text", "int8"]
)


class Progress(Protocol):
    """What the import reports its progress to (``cli.progress.ProgressBar`` is one)."""

    def phase(self, name: str, total: int | None = None) -> None: ...

    def update(self, done: int, total: int | None = None) -> None: ...


class _NoProgress:
    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None) -> None:
        pass


@dataclass(eq=False)
class _Rated:
    """The new matches' ratings: before/after by slot (-1 empty) and every touched player's standing."""

    before: Int64Array
    after: Int64Array
    ratings: dict[str, int]
    played: dict[str, int]
    last_seq: dict[str, int]
    known: set[str]


def bulk_import(
    ledger: LedgerBase,
    source: HistoryArrays | LinedMatches,
    *,
    skip_bad: bool,
    progress: Progress | None = None,
) -> ImportReport:
    """Import ``source`` into ``ledger`` as the module docstring says; return what it did.

    Raises:
        HistoryError: a match is already in the ledger with a different body (without
            ``skip_bad``), or the rating core refuses a match (field and line named); nothing stored.
    """
    bar = progress or _NoProgress()
    with _no_gc():
        return _import(ledger, source, skip_bad, bar)


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Without the cyclic collector: the import builds millions of acyclic tuples and strings, and
    the collections they trigger cost a fifth of its CPU (ATP file on SQLite: 17.2 s -> 14.1 s)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _import(
    ledger: LedgerBase, source: HistoryArrays | LinedMatches, skip_bad: bool, bar: Progress
) -> ImportReport:
    rows = import_rows(source)
    bar.phase("checking", len(rows))
    with _exclusive(ledger) as raw:
        pg = not isinstance(raw, sqlite3.Connection)
        active = raw.execute("SELECT id FROM rating_versions WHERE active").fetchone()
        if active is None:
            raise NotFoundError("there is no active ratings version")
        version = ledger._version_raw(raw, int(active[0]))
        report = ImportReport()
        new = _sort_out(raw, pg, rows, skip_bad, report)
        fresh = rows.take(new) if not new.all() else rows
        report.created = len(fresh)
        if not len(fresh):
            return report
        first = _take_sequences(raw, pg, len(fresh))
        bar.phase("rating", len(fresh))
        rated = _rate(raw, pg, version, fresh, first, bar)
        bar.phase("storing", len(fresh))
        _store(raw, pg, version, fresh, first, rated, bar)
    return report


@contextlib.contextmanager
def _exclusive(ledger: LedgerBase) -> Iterator[Any]:
    """The writer's DBAPI connection in one transaction holding the ledger exclusively."""
    conn = ledger.db.write.raw_connection()
    try:
        raw = conn.driver_connection
        if isinstance(raw, sqlite3.Connection):
            with ledger.db.write_lock or contextlib.nullcontext():
                raw.execute("BEGIN IMMEDIATE")
                try:
                    yield raw
                    raw.execute("COMMIT")
                except BaseException:
                    if raw.in_transaction:
                        raw.rollback()
                    raise
        else:
            assert isinstance(raw, psycopg.Connection)
            with raw.transaction():
                raw.execute("LOCK TABLE matches IN EXCLUSIVE MODE")
                yield raw
    finally:
        conn.close()


def _chunks(n: int) -> Iterator[slice]:
    for start in range(0, n, CHUNK):
        yield slice(start, min(start + CHUNK, n))


def _lookup(raw: Any, pg: bool, sql_sqlite: str, sql_pg: str, keys: Sequence[str], *params: Any) -> list[Any]:
    """Rows of a query over many keys, in chunks: a JSON array on SQLite (one parameter), an array on PG."""
    out: list[Any] = []
    for part in _chunks(len(keys)):
        chunk = list(keys[part])
        if pg:
            out.extend(raw.execute(sql_pg, (*params, chunk)).fetchall())
        else:
            out.extend(raw.execute(sql_sqlite, (*params, json.dumps(chunk))).fetchall())
    return out


def _sort_out(
    raw: Any, pg: bool, rows: ImportRows, skip_bad: bool, report: ImportReport
) -> npt.NDArray[np.bool_]:
    """Which rows are new; counts the repeats, refuses (or with ``skip_bad`` reports) conflicts."""
    new = np.ones(len(rows), dtype=bool)
    if raw.execute("SELECT 1 FROM matches LIMIT 1").fetchone() is None:
        return new
    stored = _lookup(
        raw,
        pg,
        "SELECT match_id, body_hash FROM matches WHERE match_id IN (SELECT value FROM json_each(?))",
        "SELECT match_id, body_hash FROM matches WHERE match_id = ANY(%b)",
        rows.match_ids,
    )
    if not stored:
        return new
    where = {mid: i for i, mid in enumerate(rows.match_ids)}
    for mid, body_hash in sorted(stored, key=lambda r: where[r[0]]):
        i = where[mid]
        new[i] = False
        if bytes(body_hash) == rows.hashes[i]:
            report.repeated += 1
            continue
        error = HistoryError(
            "match_id", f"{mid!r} is already in the ledger with a different match", line=rows.lines[i]
        )
        if not skip_bad:
            raise error
        report.refused.append(str(error))
    return new


def _take_sequences(raw: Any, pg: bool, n: int) -> int:
    """The first of ``n`` consecutive new sequences (the ledger is held exclusively)."""
    if pg:
        # nextval + n - 1 in one statement: nobody else draws from the sequence under the lock.
        last = raw.execute("SELECT setval('ledger_sequence', nextval('ledger_sequence') + %s - 1)", (n,))
        return int(last.fetchone()[0]) - n + 1
    return int(raw.execute("SELECT coalesce(max(sequence), 0) FROM matches").fetchone()[0]) + 1


def _standing(raw: Any, pg: bool, version_id: int, players: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Stored ``(rating, matches_played)`` in ``version_id`` of those of ``players`` rated there."""
    found = _lookup(
        raw,
        pg,
        "SELECT player_id, rating, matches_played FROM player_ratings WHERE version_id = ?"
        " AND player_id IN (SELECT value FROM json_each(?))",
        "SELECT player_id, rating, matches_played FROM player_ratings WHERE version_id = %s"
        " AND player_id = ANY(%b)",
        players,
        version_id,
    )
    return {pid: (int(rating), int(count)) for pid, rating, count in found}


def _rate(raw: Any, pg: bool, version: VersionInfo, rows: ImportRows, first: int, bar: Progress) -> _Rated:
    """Rate the new rows from the players' stored standing: the kernel, or the fold for team matches."""
    touched = np.unique(rows.slots[rows.slots >= 0])
    ids = rows.player_ids
    standing = _standing(raw, pg, version.id, [ids[i] for i in touched.tolist()])
    n = len(rows)
    seqs = np.arange(first, first + n, dtype=np.int64)
    before = np.full((n, 4), -1, dtype=np.int64)
    after = np.full((n, 4), -1, dtype=np.int64)
    rules = version.rules
    if rows.history is not None:
        final, games = _run_kernel(rows, rules, standing, before, after, bar)
    else:
        final, games = _run_fold(rows, rules, standing, before, after, bar)
    last = np.zeros(len(ids), dtype=np.int64)
    for slot in range(4):
        present = rows.slots[:, slot] >= 0
        np.maximum.at(last, rows.slots[present, slot], seqs[present])
    names = [ids[i] for i in touched.tolist()]
    return _Rated(
        before,
        after,
        dict(zip(names, final[touched].tolist(), strict=True)),
        dict(zip(names, games[touched].tolist(), strict=True)),
        dict(zip(names, last[touched].tolist(), strict=True)),
        set(standing),
    )


def _start(
    ids: Sequence[str], rules: Rules, standing: dict[str, tuple[int, int]]
) -> tuple[Int64Array, Int64Array]:
    ratings = np.full(len(ids), rules.initial_rating, dtype=np.int64)
    games = np.zeros(len(ids), dtype=np.int64)
    for i, pid in enumerate(ids):
        found = standing.get(pid)
        if found is not None:
            ratings[i], games[i] = found
    return ratings, games


def _run_kernel(
    rows: ImportRows,
    rules: Rules,
    standing: dict[str, tuple[int, int]],
    before: Int64Array,
    after: Int64Array,
    bar: Progress,
) -> tuple[Int64Array, Int64Array]:
    from ...batch.kernel import run_kernel

    assert rows.history is not None
    ratings, games = _start(rows.player_ids, rules, standing)
    try:
        record = run_kernel(rows.history, rules, ratings, games, record=True, progress=bar.update)
    except SedmaEloError as exc:
        raise located(exc, None) from None
    assert record is not None
    before[:, 0], before[:, 2] = record.before[:, 0], record.before[:, 1]
    after[:, 0], after[:, 2] = record.after[:, 0], record.after[:, 1]
    return ratings, games


def _run_fold(
    rows: ImportRows,
    rules: Rules,
    standing: dict[str, tuple[int, int]],
    before: Int64Array,
    after: Int64Array,
    bar: Progress,
) -> tuple[Int64Array, Int64Array]:
    assert rows.matches is not None
    ids = rows.player_ids
    state = RatingState({p: r for p, (r, _) in standing.items()}, {p: g for p, (_, g) in standing.items()})
    for i, match in enumerate(rows.matches):
        try:
            result = state.rate(match, rules)
        except SedmaEloError as exc:
            raise located(exc, rows.lines[i]) from None
        state.commit(result)
        slot_of = {ids[p]: s for s, p in enumerate(rows.slots[i].tolist()) if p >= 0}
        for change in result.changes:
            slot = slot_of[change.player_id]
            before[i, slot], after[i, slot] = change.rating_before, change.rating_after
        if i % CHUNK == 0:
            bar.update(i)
    ratings, games = _start(ids, rules, {})
    for j, pid in enumerate(ids):
        ratings[j] = state.ratings.get(pid, rules.initial_rating)
        games[j] = state.games.get(pid, 0)
    return ratings, games


def _store(
    raw: Any, pg: bool, version: VersionInfo, rows: ImportRows, first: int, rated: _Rated, bar: Progress
) -> None:
    """Write the new rows: players interned, ledger rows, rating changes, player ratings, feed."""
    vid = version.id
    known = rated.known
    keys = _intern(raw, pg, list(rated.last_seq))
    key_of = np.full(len(rows.player_ids), -1, dtype=np.int64)
    for i, pid in enumerate(rows.player_ids):
        if pid in keys:
            key_of[i] = keys[pid]
    n = len(rows)
    seqs = np.arange(first, first + n, dtype=np.int64)
    slot_keys = np.where(rows.slots >= 0, key_of[rows.slots], -1)
    created = now_micros()
    for part in _chunks(n):
        _write_matches(raw, pg, vid, rows, part, seqs, slot_keys, created)
        bar.update(part.stop)
    _write_changes(raw, pg, vid, seqs, slot_keys, rated)
    if pg:
        write_players_pg(raw, vid, rated.ratings, rated.played, rated.last_seq, known)
    else:
        write_players_sqlite(raw, vid, rated.ratings, rated.played, rated.last_seq, known)
    _write_feed(raw, vid, rows, seqs, rated)


def _intern(raw: Any, pg: bool, players: Sequence[str]) -> dict[str, int]:
    """The key of each player in ``players``, adding the new ones (in id order, as POST does)."""
    if not pg:
        return intern_sqlite(raw, players)
    ordered = sorted(players)
    for part in _chunks(len(ordered)):
        raw.execute(PG_INTERN, (ordered[part],))
    found = _lookup(raw, True, "", "SELECT player_id, id FROM players WHERE player_id = ANY(%b)", ordered)
    return {pid: int(key) for pid, key in found}


def _write_matches(
    raw: Any,
    pg: bool,
    vid: int,
    rows: ImportRows,
    part: slice,
    seqs: Int64Array,
    slot_keys: Int64Array,
    created: int,
) -> None:
    """One chunk of ledger rows (:data:`~.rows.FACT_COLUMNS` plus sequence, version, void, time)."""
    times: dict[str | None, int | None] = {}
    played = []
    for text in rows.played_at[part]:
        if text not in times:
            times[text] = micros(text)
        played.append(times[text])
    keys = slot_keys[part]
    counts = rows.counts[part]
    columns: list[list[Any]] = [
        seqs[part].tolist(),
        rows.match_ids[part],
        rows.hashes[part],
        played,
        rows.winner[part].tolist(),
    ]
    empty = keys < 0
    for s in range(len(MATCH_SLOTS)):
        columns.append([None if k < 0 else k for k in keys[:, s].tolist()])
    for s in range(len(MATCH_SLOTS)):
        for j in range(4):
            values = counts[:, 4 * s + j].tolist()
            if empty[:, s].any():
                values = [None if e else v for v, e in zip(values, empty[:, s].tolist(), strict=True)]
            columns.append(values)
    size = part.stop - part.start
    if pg:
        columns += [[vid] * size, [False] * size, [None] * size, [created] * size]
        with raw.cursor().copy(_PG_COPY_MATCHES) as copy:
            copy.set_types(_PG_MATCH_TYPES)
            for row in zip(*columns, strict=True):
                copy.write_row(row)
    else:
        columns += [[vid] * size, [created] * size]
        raw.executemany(SQLITE_INSERT_MATCHES, zip(*columns, strict=True))


def _write_changes(
    raw: Any, pg: bool, vid: int, seqs: Int64Array, slot_keys: Int64Array, rated: _Rated
) -> None:
    """The rating changes, through the rebuilds' writer (:func:`.bulk.write_changes`), a chunk at a
    time in the primary key's order (player key, sequence): SQLite appends."""
    present = slot_keys >= 0
    keys = slot_keys[present]
    seq = np.broadcast_to(seqs[:, None], slot_keys.shape)[present]
    changes = np.column_stack([seq, keys, rated.before[present], rated.after[present]])
    changes = changes[np.lexsort((seq, keys))]
    for part in _chunks(len(changes)):
        write_changes(raw, pg, vid, changes[part])


def _write_feed(raw: Any, vid: int, rows: ImportRows, seqs: Int64Array, rated: _Rated) -> None:
    """One ``match`` event a new row, as the batch writers record it (players in the changes' order)."""
    created_at = now_text()
    ids = rows.player_ids
    order = (0, 1, 2, 3)  # a1, a2, b1, b2: the order of a result's changes (side a first)
    slots = rows.slots.tolist()
    before, after = rated.before.tolist(), rated.after.tolist()
    seq_list = seqs.tolist()
    for part in _chunks(len(rows)):
        events = []
        for i in range(part.start, part.stop):
            players = [
                player_json(ids[slots[i][s]], before[i][s], after[i][s]) for s in order if slots[i][s] >= 0
            ]
            events.append(
                match_event(vid, rows.match_ids[i], seq_list[i], rows.played_at[i], players, created_at)
            )
        append_events(raw, events)
