"""Bulk import: a history file applied in one transaction, streamed a chunk at a time.

Contract (``sedma-elo import``, :meth:`Ledger.import_history`): the stored rows are those that
posting the file's matches one by one to ``POST /v1/matches`` would write, in file order (ledger
rows in the format of :mod:`.rows`, players interned, rating changes, player ratings, one ``match``
event a match in the change feed, as :mod:`.feed_events` formats it), except the times they were
written at and the players' integer keys. Exactly once: a match already in the ledger with the same
canonical body counts as repeated and changes nothing; one with a different body refuses the whole
file (a :class:`~sedma_elo.errors.HistoryError` naming its line), unless ``skip_bad``, which leaves
it out and reports it. A ``match_id`` twice in the file is refused the same way (the file readers
find it within a chunk, the import across chunks). Nothing is stored for a refused file.

How: the whole import holds the ledger exclusively (SQLite's write lock, ``LOCK TABLE matches IN
EXCLUSIVE MODE`` on PostgreSQL, which readers pass), so the new matches take consecutive
sequences. The source comes in chunks (:func:`~sedma_elo.batch.history.iter_lined` streams a
file; a source already in memory is cut into ``chunk`` rows); each chunk is sorted out against the
ledger (which holds the earlier chunks already), its players interned, rated and written (matches,
changes, feed) before the next is read. The ratings come from the ledger's one bulk rater,
:func:`.bulk.rate_chunk` (the batch kernel on runs of one-against-one matches, the fold on team
matches), on the state by player key (:class:`.bulk.KeyState`) started from the players' stored
standing, so memory holds one chunk plus a few numbers a player, whatever the file's size. The
database only stores the numbers: ``COPY`` on PostgreSQL, ``executemany`` on SQLite. On
PostgreSQL an import whose version has no rating change yet fills that version's partition as a
re-rate fills its new one (:mod:`~sedma_elo.storage.partitions`): a bare table made in the
import's transaction, written with ``COPY ... FREEZE``, indexed once at the end and attached (a
refused file leaves the old, empty partition; readers of ``rating_changes`` wait for the commit).
Every import ends with ``ANALYZE`` of the tables it filled (:mod:`.pg_bulk`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import psycopg

from ...batch.history import HistoryArrays, LinedMatches
from ...core.rules import Rules
from ...errors import HistoryError, NotFoundError, SedmaEloError
from ...storage.partitions import create_sql, finish_sql, partition_name
from ...storage.schema import MATCH_SLOTS
from .base import LedgerBase
from .bulk import Int64Array, KeyState, rate_chunk, use_kernel, write_changes
from .feed_events import copy_events, match_event, match_player
from .import_rows import ImportRows, import_rows, located
from .pg_bulk import IMPORTED_TABLES, analyze
from .rebuild import store_players
from .rows import FACT_COLUMNS, PG_INTERN, intern_sqlite, micros, now_micros
from .sql import SQLITE_INSERT_MATCHES
from .types import ImportReport, VersionInfo, now_text

__all__ = ["CHUNK", "Progress", "Source", "bulk_import"]

#: Rows per chunk when the source is already in memory (and per executemany / COPY).
CHUNK = 50_000
#: What :func:`bulk_import` takes: a history read whole, or its chunks in file order.
Source = HistoryArrays | LinedMatches | Iterable[HistoryArrays | LinedMatches]
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


def bulk_import(
    ledger: LedgerBase,
    source: Source,
    *,
    skip_bad: bool,
    progress: Progress | None = None,
    chunk: int = CHUNK,
) -> ImportReport:
    """Import ``source`` into ``ledger`` as the module docstring says; return what it did.

    ``chunk`` bounds the rows handled at once (a chunk of the source is cut to it).

    Raises:
        HistoryError: a match is already in the ledger with a different body, or twice in the
            file (without ``skip_bad``); the rating core refuses a match; a chunk of the source
            cannot be read (field and line named). Nothing is stored.
    """
    bar = progress or _NoProgress()
    with _no_gc(), _exclusive(ledger) as raw:
        run = _Run(ledger, raw, skip_bad)
        with _loading(run):
            bar.phase("importing")
            for part in _parts(source, chunk):
                run.add(part)
                bar.update(run.done)
            run.finish()
        return run.report


@contextlib.contextmanager
def _loading(run: _Run) -> Iterator[None]:
    """On PostgreSQL: the version's changes into a bare partition if it has none yet, and
    ``ANALYZE`` of the tables the import filled, so the plans of the next reads, ``verify`` and
    ``void`` see their size.

    Inserted into the indexed partition, the import writes a chunk's changes player by player, so
    each of its two B-trees took a random insert a row (the ATP file: 24 s of a 68 s import, 2.4 s
    without them plus 4.5 s to build them). Not by dropping the parent's indexes and building them
    again from their catalog definitions (as the import once did): the sequence index's definition
    reads ``ON ONLY`` the parent, so it came back invalid and on no partition, and an imported
    version read one match's changes by a scan of all of them (548 ms at 10 M matches, against
    0.1-0.4 ms by the index; migration 0013 repairs such ledgers).
    """
    raw = run.raw
    if not run.pg:
        yield
        return
    name = partition_name(run.version.id)
    if raw.execute(f"SELECT 1 FROM {name} LIMIT 1").fetchone() is not None:
        yield
    else:
        raw.execute(f"DROP TABLE {name}")  # empty: made again bare in this transaction
        for statement in create_sql(run.version.id):
            raw.execute(statement)
        run.into = name
        yield
        for statement in finish_sql(run.version.id):
            raw.execute(statement)
    analyze(raw, IMPORTED_TABLES)


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


def _parts(source: Source, chunk: int) -> Iterator[HistoryArrays | LinedMatches]:
    """``source`` in file order, cut into parts of at most ``chunk`` matches."""
    if isinstance(source, HistoryArrays):
        for start in range(0, max(len(source), 1), chunk):
            yield source.part(slice(start, start + chunk))
    elif isinstance(source, LinedMatches):
        for start in range(0, max(len(source.matches), 1), chunk):
            part = slice(start, start + chunk)
            yield LinedMatches(source.matches[part], source.lines[part])
    else:
        for piece in source:
            yield from _parts(piece, chunk)


class _Run:
    """One import's state between chunks: the rating state by player key and what is written."""

    def __init__(self, ledger: LedgerBase, raw: Any, skip_bad: bool) -> None:
        self.raw, self.skip_bad = raw, skip_bad
        self.pg = not isinstance(raw, sqlite3.Connection)
        self.ph = "%s" if self.pg else "?"
        active = raw.execute("SELECT id FROM rating_versions WHERE active").fetchone()
        if active is None:
            raise NotFoundError("there is no active ratings version")
        self.version: VersionInfo = ledger._version_raw(raw, int(active[0]))
        self.rules: Rules = self.version.rules
        self.report = ImportReport()
        self.state = KeyState.fresh(0, self.rules)
        self.placeholders: list[str] = []
        # By key: the stored standing was read (``seen``), the player has a row in the version (``known``).
        self.seen = np.zeros(0, dtype=bool)
        self.known: set[int] = set()
        self.key_of: dict[str, int] = {}
        self.first: int | None = None  # the import's first sequence: rows from it on are this file's
        self.done = 0
        #: PostgreSQL: the bare table the version's changes are copied into (see ``_loading``).
        self.into: str | None = None
        self.created_at = now_micros()
        self.feed_time = now_text()

    def add(self, source: HistoryArrays | LinedMatches) -> None:
        """Sort out, rate and write one chunk of the file."""
        rows = import_rows(source)
        self.done += len(rows)
        new = self._sort_out(rows)
        fresh = rows.take(new) if not new.all() else rows
        n = len(fresh)
        self.report.created += n
        if not n:
            return
        local = self._intern(fresh)
        slot_keys = np.where(fresh.slots >= 0, local[fresh.slots], -1)
        first = _take_sequences(self.raw, self.pg, n)
        if self.first is None:
            self.first = first
        seqs = np.arange(first, first + n, dtype=np.int64)
        changes = self._rate(fresh, seqs, slot_keys)
        # rate_chunk gives each match's changes in slot order (a1, a2, b1, b2), matches in order.
        present = slot_keys >= 0
        assert np.array_equal(changes[:, 1], slot_keys[present]), "changes out of slot order"
        before = np.full(slot_keys.shape, -1, dtype=np.int64)
        after = before.copy()
        before[present], after[present] = changes[:, 2], changes[:, 3]
        vid = self.version.id
        _write_matches(self.raw, self.pg, vid, fresh, seqs, slot_keys, self.created_at)
        write_changes(self.raw, self.pg, vid, changes, self.into)
        _write_feed(self.raw, vid, fresh, seqs, before, after, self.feed_time)

    def finish(self) -> None:
        """Store the player rows of everyone the import rated."""
        store_players(self.raw, self.ph, self.version.id, self.state, self.known)

    def _sort_out(self, rows: ImportRows) -> npt.NDArray[np.bool_]:
        """Which rows are new; counts the repeats, refuses (or with ``skip_bad`` reports) conflicts
        and ids an earlier chunk of the file had."""
        new = np.ones(len(rows), dtype=bool)
        raw, pg = self.raw, self.pg
        if raw.execute("SELECT 1 FROM matches LIMIT 1").fetchone() is None:
            return new
        stored = _lookup(
            raw,
            pg,
            "SELECT match_id, body_hash, sequence FROM matches"
            " WHERE match_id IN (SELECT value FROM json_each(?))",
            "SELECT match_id, body_hash, sequence FROM matches WHERE match_id = ANY(%b)",
            rows.match_ids,
        )
        if not stored:
            return new
        where = {mid: i for i, mid in enumerate(rows.match_ids)}
        for mid, body_hash, seq in sorted(stored, key=lambda r: where[r[0]]):
            i = where[mid]
            new[i] = False
            if self.first is not None and seq >= self.first:
                reason = f"duplicate {mid!r} (first on an earlier line of the file)"
            elif bytes(body_hash) == rows.hashes[i]:
                self.report.repeated += 1
                continue
            else:
                reason = f"{mid!r} is already in the ledger with a different match"
            error = HistoryError("match_id", reason, line=rows.lines[i])
            if not self.skip_bad:
                raise error
            self.report.refused.append(str(error))
        return new

    def _intern(self, rows: ImportRows) -> Int64Array:
        """Each of the chunk's player indexes as its key (-1: not in ``rows``), new players added;
        grows the state to the keys and reads the stored standing of players seen first."""
        used = np.unique(rows.slots[rows.slots >= 0]).tolist()
        ids = rows.player_ids
        unknown = [ids[i] for i in used if ids[i] not in self.key_of]
        if unknown:
            found = _intern(self.raw, self.pg, unknown)
            self.key_of.update(found)
            self.state.names.update((k, p) for p, k in found.items())
            self._grow(max(found.values()) + 1)
            self._read_standing(sorted(found.values()))
        local = np.full(len(ids), -1, dtype=np.int64)
        key_of = self.key_of
        local[used] = [key_of[ids[i]] for i in used]
        return local

    def _grow(self, size: int) -> None:
        state = self.state
        have = len(state.ratings)
        if size <= have:
            return
        more = max(size, 2 * have) - have
        state.ratings = np.concatenate([state.ratings, np.full(more, self.rules.initial_rating, np.int64)])
        state.games = np.concatenate([state.games, np.zeros(more, np.int64)])
        state.last = np.concatenate([state.last, np.zeros(more, np.int64)])
        self.seen = np.concatenate([self.seen, np.zeros(more, bool)])
        self.placeholders += [""] * more

    def _read_standing(self, keys: list[int]) -> None:
        """Start ``keys`` not seen before from their stored rating and count in the version."""
        fresh = [k for k in keys if not self.seen[k]]
        self.seen[fresh] = True
        names = self.state.names
        for pid, (rating, games) in _standing(
            self.raw, self.pg, self.version.id, [names[k] for k in fresh]
        ).items():
            k = self.key_of[pid]
            self.state.ratings[k], self.state.games[k] = rating, games
            self.known.add(k)

    def _rate(self, rows: ImportRows, seqs: Int64Array, slot_keys: Int64Array) -> Int64Array:
        """The chunk's rating changes ``(seq, key, before, after)`` by :func:`.bulk.rate_chunk`."""
        arr = np.empty((len(rows), 6 + 16), dtype=np.int64)
        arr[:, 0], arr[:, 1], arr[:, 2:6], arr[:, 6:] = seqs, rows.winner, slot_keys, rows.counts
        state = self.state
        kernel = use_kernel(len(rows))
        start = (state.ratings.copy(), state.games.copy(), state.last.copy())
        try:
            return rate_chunk(self.raw, self.ph, arr, self.rules, state, self.placeholders, kernel)
        except SedmaEloError:
            # Find the refused match: from the chunk's start, one row at a time through the fold.
            state.ratings, state.games, state.last = start
            for i in range(len(arr)):
                try:
                    rate_chunk(self.raw, self.ph, arr[i : i + 1], self.rules, state, self.placeholders, False)
                except SedmaEloError as exc:
                    raise located(exc, rows.lines[i]) from None
            raise


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


def _lookup(raw: Any, pg: bool, sql_sqlite: str, sql_pg: str, keys: Sequence[str], *params: Any) -> list[Any]:
    """Rows of a query over many keys, in chunks: a JSON array on SQLite (one parameter), an array on PG."""
    out: list[Any] = []
    for start in range(0, len(keys), CHUNK):
        chunk = list(keys[start : start + CHUNK])
        if pg:
            out.extend(raw.execute(sql_pg, (*params, chunk)).fetchall())
        else:
            out.extend(raw.execute(sql_sqlite, (*params, json.dumps(chunk))).fetchall())
    return out


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


def _intern(raw: Any, pg: bool, players: Sequence[str]) -> dict[str, int]:
    """The key of each player in ``players``, adding the new ones (in id order, as POST does)."""
    if not pg:
        return intern_sqlite(raw, players)
    ordered = sorted(players)
    raw.execute(PG_INTERN, (ordered,))
    found = _lookup(raw, True, "", "SELECT player_id, id FROM players WHERE player_id = ANY(%b)", ordered)
    return {pid: int(key) for pid, key in found}


def _write_matches(
    raw: Any,
    pg: bool,
    vid: int,
    rows: ImportRows,
    seqs: Int64Array,
    keys: Int64Array,
    created: int,
) -> None:
    """A chunk's ledger rows (:data:`~.rows.FACT_COLUMNS` plus sequence, version, void, time)."""
    times: dict[str | None, int | None] = {}
    played = []
    for text in rows.played_at:
        if text not in times:
            times[text] = micros(text)
        played.append(times[text])
    counts = rows.counts
    columns: list[list[Any]] = [seqs.tolist(), rows.match_ids, rows.hashes, played, rows.winner.tolist()]
    empty = keys < 0
    for s in range(len(MATCH_SLOTS)):
        columns.append([None if k < 0 else k for k in keys[:, s].tolist()])
    for s in range(len(MATCH_SLOTS)):
        for j in range(4):
            values = counts[:, 4 * s + j].tolist()
            if empty[:, s].any():
                values = [None if e else v for v, e in zip(values, empty[:, s].tolist(), strict=True)]
            columns.append(values)
    size = len(rows)
    if pg:
        columns += [[vid] * size, [False] * size, [None] * size, [created] * size]
        with raw.cursor().copy(_PG_COPY_MATCHES) as copy:
            copy.set_types(_PG_MATCH_TYPES)
            for row in zip(*columns, strict=True):
                copy.write_row(row)
    else:
        columns += [[vid] * size, [created] * size]
        raw.executemany(SQLITE_INSERT_MATCHES, zip(*columns, strict=True))


def _write_feed(
    raw: Any, vid: int, rows: ImportRows, seqs: Int64Array, before: Int64Array, after: Int64Array, when: str
) -> None:
    """One ``match`` event a new row, as the batch writers record it (players in the changes' order)."""
    ids = rows.player_ids
    order = (0, 1, 2, 3)  # a1, a2, b1, b2: the order of a result's changes (side a first)
    slots = rows.slots.tolist()
    before_l, after_l = before.tolist(), after.tolist()
    events = []
    for i, seq in enumerate(seqs.tolist()):
        players = [
            match_player(ids[slots[i][s]], before_l[i][s], after_l[i][s]) for s in order if slots[i][s] >= 0
        ]
        events.append(match_event(vid, rows.match_ids[i], seq, rows.played_at[i], players, when))
    copy_events(raw, events)
