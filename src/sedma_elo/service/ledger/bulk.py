"""The ledger's bulk path: read the compact rows in chunks as numpy arrays and rate them with the kernel.

A rebuild (re-rate, void, activate) and ``verify`` replay long runs of the ledger. Building a
:class:`~sedma_elo.core.model.Match` per row and rating it in Python cost them ~85 µs a match;
here the rows come out of the database as integer arrays (:func:`read_chunks`: ``COPY ... TO
STDOUT (FORMAT binary)`` on PostgreSQL, ``fetchall`` on SQLite), a run of one-against-one matches
goes through the batch kernel (:func:`~sedma_elo.batch.kernel.run_kernel`, the numba mirror of
the fold, tested to agree with it bit for bit), and each two-against-two match goes through the
fold itself (:class:`~sedma_elo.core.fold.RatingState`): the kernel rates one against one only.

Players are indexed by their integer key in ``players`` (the ledger's rows hold those keys), so the
state of a version is two arrays, ``ratings`` and ``games``, of ``max(players.id) + 1`` entries.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from ...batch.history import HistoryArrays
from ...batch.kernel import run_kernel
from ...core.fold import RatingState
from ...core.model import Match, PlayerStats
from ...core.rules import MAX_RATING, MIN_RATING, Rules
from ...errors import ValidationError
from ...storage.schema import MATCH_SLOTS, STAT_NAMES

__all__ = [
    "CHUNK",
    "CHUNK_EXPRESSIONS",
    "KERNEL_FROM",
    "Blanks",
    "KeyState",
    "copy_binary",
    "names_of",
    "parse_copy_binary",
    "query_int64",
    "rate_chunk",
    "read_changes",
    "read_chunks",
    "stream_rows",
    "use_kernel",
    "write_changes",
]

Int64Array = npt.NDArray[np.int64]

#: Ledger rows per chunk: big enough that a chunk's SQL and numpy overheads vanish, small enough
#: that a chunk's arrays and rows stay a few MB (verify's memory must not grow with the ledger).
CHUNK = 20_000

#: Matches from which a rebuild or verify uses the kernel: below, loading numba (0.5-3 s) would cost
#: more than the fold does (40-85 µs a match); once it is loaded, the kernel is always used.
KERNEL_FROM = 20_000

_JIT_MODULE = "sedma_elo.batch._kernel_jit"
_WINNERS = ("a", "b", "draw")
_STATS = tuple(f"{slot}_{name}" for slot in MATCH_SLOTS for name in STAT_NAMES)
#: A chunk's columns: sequence, winner, the four slots' keys (-1: empty), the 16 counts (0: empty).
CHUNK_EXPRESSIONS = (
    "m.sequence",
    "m.winner",
    "m.a1",
    "coalesce(m.a2, -1)",
    "m.b1",
    "coalesce(m.b2, -1)",
    *(f"coalesce(m.{c}, 0)" for c in _STATS),
)
_CHUNK_COLUMNS = ", ".join(CHUNK_EXPRESSIONS)
#: Byte width of each chunk column in PostgreSQL's binary COPY (bigint, smallint, then integers).
_CHUNK_WIDTHS = (8, 2) + (4,) * (4 + len(_STATS))
#: The kernel's count columns (bad_a, bad_b, 16_a, 16_b, 24_a, 24_b, 4_a, 4_b) in a chunk's
#: columns: slot a1's counts are columns 6-9, slot b1's 14-17.
_KERNEL_COUNTS = [6, 14, 7, 15, 8, 16, 9, 17]
_PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)


def names_of(raw: Any, ph: str, keys: Any) -> dict[int, str]:
    """The player id of each player key in ``keys`` (one query per 500 keys)."""
    wanted = sorted({int(k) for k in keys})
    out: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ", ".join([ph] * len(part))
        out.update(
            (int(k), str(p))
            for k, p in raw.execute(f"SELECT id, player_id FROM players WHERE id IN ({marks})", part)
        )
    return out


def _row_dtype(widths: tuple[int, ...]) -> np.dtype[Any]:
    fields: list[tuple[str, str]] = [("n", ">i2")]
    for i, width in enumerate(widths):
        fields += [(f"l{i}", ">i4"), (f"c{i}", f">i{width}")]
    return np.dtype(fields)


def parse_copy_binary(data: bytes | bytearray, widths: tuple[int, ...]) -> Int64Array:
    """The rows of a binary COPY of non-null fixed-width integer columns as an int64 ``(n, k)`` array."""
    body = memoryview(data)[len(_PGCOPY_HEADER) : len(data) - 2]  # the header, then the -1 trailer
    rows = np.frombuffer(body, dtype=_row_dtype(widths))
    out = np.empty((len(rows), len(widths)), dtype=np.int64)
    for i in range(len(widths)):
        out[:, i] = rows[f"c{i}"]
    return out


def copy_binary(columns: list[Int64Array], widths: tuple[int, ...]) -> bytes:
    """A binary COPY body (header, rows, trailer) of equal-length integer columns."""
    dtype = _row_dtype(widths)
    rows = np.empty(len(columns[0]), dtype=dtype)
    rows["n"] = len(widths)
    for i, (col, width) in enumerate(zip(columns, widths, strict=True)):
        rows[f"l{i}"] = width
        rows[f"c{i}"] = col
    return _PGCOPY_HEADER + rows.tobytes() + b"\xff\xff"


def query_int64(raw: Any, pg: bool, sql: str, widths: tuple[int, ...]) -> Int64Array:
    """The result of ``sql`` (integer columns, no NULLs, no parameters) as an int64 array."""
    if pg:
        buf = bytearray()
        with raw.cursor() as cur, cur.copy(f"COPY ({sql}) TO STDOUT (FORMAT binary)") as copy:
            for block in copy:
                buf += block
        return parse_copy_binary(buf, widths)  # no bytes() copy of the whole result
    # Straight from the cursor into the array: no list of row tuples (verify's memory).
    flat = np.fromiter(chain.from_iterable(raw.execute(sql)), dtype=np.int64)
    return flat.reshape(-1, len(widths))


def stream_rows(
    raw: Any, pg: bool, sql: str, params: tuple[Any, ...] = (), size: int = CHUNK
) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of ``sql`` in lists of at most ``size``, streamed (a server-side cursor on
    PostgreSQL, inside the caller's transaction; SQLite's own stepping), so that memory holds one
    list whatever the result's size."""
    if pg:
        with raw.cursor(name="stream_rows") as cur:
            cur.itersize = size
            cur.execute(sql, params)
            while rows := cur.fetchmany(size):
                yield rows
        return
    cur = raw.execute(sql, params)
    while rows := cur.fetchmany(size):
        yield rows


def read_chunks(
    raw: Any, pg: bool, start: int, end: int, chunk: int | None = None
) -> Iterator[tuple[int, int, Int64Array]]:
    """The non-voided ledger rows with ``start <= sequence <= end``, in sequence order, by chunks.

    Yields ``(low, high, rows)``: ``rows`` (int64, one row a match, the columns of
    ``_CHUNK_COLUMNS``) holds every non-voided match with ``low < sequence <= high``; the chunks'
    ranges cover ``[start, end]`` without a gap (the last one ends at ``end``). Each chunk is one
    range of ``chunk`` sequences on the primary key (at most ``chunk`` rows, fewer where sequences
    are missing or voided), so memory holds one chunk whatever the ledger's size. ``chunk``
    defaults to :data:`CHUNK`.
    """
    chunk = CHUNK if chunk is None else chunk
    # A bounded range, not ``ORDER BY sequence LIMIT n``: without statistics (a ledger just
    # imported, never analysed) PostgreSQL ran that as a scan and sort of the whole table for
    # every chunk (0.6 s a chunk at 603k matches); a range of the key is an index scan, always.
    top = raw.execute(f"SELECT max(sequence) FROM matches WHERE sequence <= {int(end)}").fetchone()[0]
    low, top = start - 1, int(top or 0)
    while True:
        high = end if low + chunk >= top else low + chunk
        sql = (
            f"SELECT {_CHUNK_COLUMNS} FROM matches m WHERE NOT m.voided AND m.sequence > {int(low)}"
            f" AND m.sequence <= {int(high)} ORDER BY m.sequence"
        )
        yield low, high, query_int64(raw, pg, sql, _CHUNK_WIDTHS)
        if high == end:
            return
        low = high


@dataclass
class KeyState:
    """A version's state by player key: rating, games played, and the last sequence each played
    in this run (0: not yet); ``names`` caches player ids looked up for the fold and for messages."""

    ratings: Int64Array
    games: Int64Array
    last: Int64Array
    names: dict[int, str] = field(default_factory=dict)

    @classmethod
    def fresh(cls, size: int, rules: Rules) -> KeyState:
        """Every one of ``size`` keys at the rules' initial rating with no game played."""
        return cls(
            np.full(size, rules.initial_rating, dtype=np.int64),
            np.zeros(size, dtype=np.int64),
            np.zeros(size, dtype=np.int64),
        )


class Blanks(Sequence[str]):
    """``size`` empty strings, none of them stored: the kernel's player ids where only their number
    counts (:func:`rate_chunk`'s ``placeholders``). A list of them cost 8 bytes a player key, 8 MB
    of ``verify``'s memory at 1,000,000 players."""

    def __init__(self, size: int) -> None:
        self._size = size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Blanks: ...

    def __getitem__(self, index: int | slice) -> str | Blanks:
        if isinstance(index, slice):
            return Blanks(len(range(*index.indices(self._size))))
        if not -self._size <= index < self._size:
            raise IndexError(index)
        return ""


def _history(rows: Int64Array, placeholders: Sequence[str]) -> HistoryArrays:
    n = len(rows)
    blank = [""] * n
    return HistoryArrays(
        player_ids=placeholders,
        player_a=rows[:, 2].astype(np.int32),
        player_b=rows[:, 4].astype(np.int32),
        winner=rows[:, 1].astype(np.int8),
        counts=np.ascontiguousarray(rows[:, _KERNEL_COUNTS], dtype=np.int32),
        match_ids=blank,
        played_at=blank,
        lines=np.zeros(n, dtype=np.int64),
    )


def _match(row: Int64Array, names: dict[int, str]) -> Match:
    """The match of one chunk row, as :func:`~sedma_elo.service.ledger.rows.match_of` builds it."""
    keys = [int(k) for k in row[2:6]]
    winner = _WINNERS[int(row[1])]
    stats = {
        names[k]: PlayerStats(*(int(v) for v in row[6 + 4 * i : 10 + 4 * i]))
        for i, k in enumerate(keys)
        if k >= 0
    }
    if keys[1] < 0:
        a, b = names[keys[0]], names[keys[2]]
        return Match.single(a, b, winner, stats[a], stats[b])  # type: ignore[arg-type]
    team_a, team_b = (names[keys[0]], names[keys[1]]), (names[keys[2]], names[keys[3]])
    return Match(team_a, team_b, winner, stats)  # type: ignore[arg-type]


def _fold_one(row: Int64Array, rules: Rules, state: KeyState) -> list[tuple[int, int, int, int]]:
    """Rate one row with the fold from the key state, update the state; ``(seq, key, before, after)``."""
    keys = [int(k) for k in row[2:6] if k >= 0]
    names = state.names
    match = _match(row, names)
    by_name = {names[k]: k for k in keys}
    # Every key holds a rating (the initial one if unseen), as the fold's missing entry would.
    fold = RatingState(
        {names[k]: int(state.ratings[k]) for k in keys}, {names[k]: int(state.games[k]) for k in keys}
    )
    result = fold.apply(match, rules)
    seq = int(row[0])
    out = []
    for change in result.changes:
        k = by_name[change.player_id]
        state.ratings[k] = change.rating_after
        state.games[k] += 1
        state.last[k] = seq
        out.append((seq, k, change.rating_before, change.rating_after))
    return out


def _kernel_run(rows: Int64Array, rules: Rules, state: KeyState, placeholders: Sequence[str]) -> Int64Array:
    """Rate a run of one-against-one rows with the kernel; the changes as ``(seq, key, before, after)``."""
    try:
        record = run_kernel(_history(rows, placeholders), rules, state.ratings, state.games, record=True)
    except ValidationError:
        # The kernel stopped before the first match with a player rated out of range (and only a
        # stored start can be): let the fold refuse that match, with the fold's own message.
        for row in rows:
            if not all(MIN_RATING <= state.ratings[k] <= MAX_RATING for k in (row[2], row[4])):
                _fold_one(row, rules, state)
        raise
    assert record is not None
    seqs = rows[:, 0]
    np.maximum.at(state.last, rows[:, 2], seqs)
    np.maximum.at(state.last, rows[:, 4], seqs)
    n = len(rows)
    out = np.empty((2 * n, 4), dtype=np.int64)
    out[0::2, 0] = seqs
    out[1::2, 0] = seqs
    out[0::2, 1] = rows[:, 2]
    out[1::2, 1] = rows[:, 4]
    out[0::2, 2] = record.before[:, 0]
    out[1::2, 2] = record.before[:, 1]
    out[0::2, 3] = record.after[:, 0]
    out[1::2, 3] = record.after[:, 1]
    return out


def use_kernel(total: int) -> bool:
    """Whether to rate ``total`` matches with the kernel (:data:`KERNEL_FROM`)."""
    return total >= KERNEL_FROM or _JIT_MODULE in sys.modules


def rate_chunk(
    raw: Any,
    ph: str,
    rows: Int64Array,
    rules: Rules,
    state: KeyState,
    placeholders: Sequence[str],
    kernel: bool = True,
) -> Int64Array:
    """Rate a chunk in order, updating ``state``; every rating change as ``(seq, key, before, after)``.

    Runs of one-against-one matches go through the kernel, two-against-two matches through the
    fold (the kernel has no teams); without ``kernel``, every match goes through the fold.
    ``placeholders`` is a sequence of ``len(state.ratings)`` strings (the kernel's player ids, read
    only in its error messages, which the fold's replace): :class:`Blanks` costs no memory a key.

    Raises:
        ValidationError: the fold refuses a match under ``rules``, as the per-match path would.
    """
    teams = np.flatnonzero(rows[:, 3] >= 0) if kernel else np.arange(len(rows))
    if len(teams) == 0:
        return _kernel_run(rows, rules, state, placeholders) if len(rows) else np.empty((0, 4), np.int64)
    missing = {int(k) for k in rows[teams, 2:6].ravel() if k >= 0} - state.names.keys()
    if missing:
        state.names.update(names_of(raw, ph, missing))
    parts: list[Int64Array] = []
    at = 0
    for t in teams.tolist():
        if t > at:
            parts.append(_kernel_run(rows[at:t], rules, state, placeholders))
        parts.append(np.array(_fold_one(rows[t], rules, state), dtype=np.int64).reshape(-1, 4))
        at = t + 1
    if at < len(rows):
        parts.append(_kernel_run(rows[at:], rules, state, placeholders))
    return np.concatenate(parts)


#: Binary COPY widths of ``rating_changes (version_id, player_key, sequence, rating_before, rating_after)``.
_CHANGE_WIDTHS = (4, 4, 8, 4, 4)
_CHANGE_NAMES = "(version_id, player_key, sequence, rating_before, rating_after)"
_CHANGE_COLUMNS = f"rating_changes {_CHANGE_NAMES}"


def write_changes(raw: Any, pg: bool, version_id: int, changes: Int64Array, fresh: str | None = None) -> None:
    """Insert rating changes ``(seq, key, before, after)`` of ``version_id``: one binary COPY on
    PostgreSQL, one ``executemany`` on SQLite (inside the caller's transaction).

    ``fresh`` (PostgreSQL): the name of a table created in the caller's transaction to COPY into
    instead of ``rating_changes`` (a re-rate's new partition, :mod:`~sedma_elo.storage.partitions`),
    with ``FREEZE``: its rows are written frozen, visible to all once committed."""
    if not len(changes):
        return
    # In primary-key order (player, sequence): the inserts walk the clustered B-tree in one pass.
    changes = changes[np.lexsort((changes[:, 0], changes[:, 1]))]
    if pg:
        vid = np.full(len(changes), version_id, dtype=np.int64)
        data = copy_binary([vid, changes[:, 1], changes[:, 0], changes[:, 2], changes[:, 3]], _CHANGE_WIDTHS)
        into = _CHANGE_COLUMNS if fresh is None else f"{fresh} {_CHANGE_NAMES}"
        options = "FORMAT binary" if fresh is None else "FORMAT binary, FREEZE"
        with raw.cursor() as cur, cur.copy(f"COPY {into} FROM STDIN ({options})") as copy:
            copy.write(data)
        return
    # Rows as tuples made one at a time from four flat lists, not a list of 40,000 row lists: those
    # were tracked by the garbage collector, whose collections walked the process's objects (numba's
    # many) over and over: ``tolist`` was 1.1 s of a 7.0 s re-rate's CPU (cProfile, ATP file).
    columns = [changes[:, i].tolist() for i in (1, 0, 2, 3)]
    raw.executemany(
        f"INSERT INTO {_CHANGE_COLUMNS} VALUES ({int(version_id)}, ?, ?, ?, ?)", zip(*columns, strict=True)
    )


def read_changes(raw: Any, pg: bool, version_id: int, low: int, high: int) -> Int64Array:
    """The stored changes of ``version_id`` with ``low < sequence <= high`` as ``(seq, key, before,
    after)``, sorted by sequence then key."""
    sql = (
        "SELECT sequence, player_key, rating_before, rating_after FROM rating_changes"
        f" WHERE version_id = {int(version_id)} AND sequence > {int(low)} AND sequence <= {int(high)}"
    )
    got = query_int64(raw, pg, sql, (8, 4, 4, 4))
    return got[np.lexsort((got[:, 1], got[:, 0]))]
