"""Verify's reads on SQLite: a chunk's integer columns packed by SQLite into one text, parsed by numpy.

``sqlite3`` builds a Python ``int`` for every value and a tuple for every row: verify's reads of
the ATP ledger (two versions) are about 23 million values, most of its time. Here SQLite formats
each row with ``printf`` and joins a chunk's rows with ``group_concat`` inside ``sqlite3_step``,
which releases the GIL (a reading thread overlaps the rating), and numpy parses the text in C.
PostgreSQL's reads are a binary COPY already (:func:`~.bulk.query_int64`); these functions use it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import bulk
from .bulk import CHUNK_EXPRESSIONS, Int64Array, query_int64, read_chunks

__all__ = ["by_sequence_key", "query_packed", "stored_changes", "verify_chunks"]

_CHANGE_EXPRESSIONS = ("sequence", "player_key", "rating_before", "rating_after")


def query_packed(raw: Any, expressions: Sequence[str], rest: str) -> Int64Array:
    """``SELECT expressions rest`` on SQLite as an int64 ``(n, len(expressions))`` array, in no
    guaranteed row order (``group_concat`` keeps none): integer expressions that are never NULL
    (``printf`` writes a NULL as 0), no parameters."""
    marks = ",".join(["%d"] * len(expressions))
    sql = f"SELECT group_concat(printf('{marks}', {', '.join(expressions)}), ',') {rest}"
    text = raw.execute(sql).fetchone()[0]
    if text is None:  # no row
        return np.empty((0, len(expressions)), dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",").reshape(-1, len(expressions))


def _by_sequence(rows: Int64Array) -> Int64Array:
    """``rows`` in the order of their first column (unique sequences), sorted only if they are not."""
    if len(rows) > 1 and not bool((rows[1:, 0] > rows[:-1, 0]).all()):
        return rows[np.argsort(rows[:, 0], kind="stable")]
    return rows


def verify_chunks(raw: Any, pg: bool, start: int, end: int) -> Iterator[tuple[int, int, Int64Array]]:
    """:func:`~.bulk.read_chunks`, the same chunks and rows; on SQLite each chunk is one packed text."""
    if pg:
        yield from read_chunks(raw, pg, start, end)
        return
    for low, high in _ranges(raw, start, end):
        rest = f"FROM matches m WHERE NOT m.voided AND m.sequence > {int(low)} AND m.sequence <= {int(high)}"
        yield low, high, _by_sequence(query_packed(raw, CHUNK_EXPRESSIONS, rest))


def _ranges(raw: Any, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The ``(low, high)`` of each of :func:`~.bulk.read_chunks`' chunks over ``[start, end]``."""
    # bulk.CHUNK read at call time (tests shrink it).
    top = raw.execute(f"SELECT max(sequence) FROM matches WHERE sequence <= {int(end)}").fetchone()[0]
    low, top = start - 1, int(top or 0)
    while True:
        high = end if low + bulk.CHUNK >= top else low + bulk.CHUNK
        yield low, high
        if high == end:
            return
        low = high


def by_sequence_key(changes: Int64Array) -> Int64Array:
    """``changes`` (``(seq, key, ...)``) sorted by sequence then key.

    One stable sort of ``seq << 31 | key`` when every sequence is below 2**32 and every key in
    ``[0, 2**31)`` (7.7x faster than ``np.lexsort`` of the two columns at 40,000 rows); else the
    lexsort."""
    if not len(changes):
        return changes
    seqs, keys = changes[:, 0], changes[:, 1]
    if seqs.min() >= 0 and seqs.max() < 1 << 32 and keys.min() >= 0 and keys.max() < 1 << 31:
        return changes[np.argsort((seqs << 31) | keys, kind="stable")]
    return changes[np.lexsort((keys, seqs))]


def stored_changes(raw: Any, pg: bool, version_id: int, low: int, high: int) -> Int64Array:
    """:func:`~.bulk.read_changes` (``(seq, key, before, after)`` with ``low < sequence <= high``,
    by sequence then key); on SQLite one packed text, off the covering sequence index (0010)."""
    rest = (
        f"FROM rating_changes WHERE version_id = {int(version_id)} AND sequence > {int(low)}"
        f" AND sequence <= {int(high)}"
    )
    if pg:
        got = query_int64(raw, pg, f"SELECT {', '.join(_CHANGE_EXPRESSIONS)} {rest}", (8, 4, 4, 4))
    else:
        got = query_packed(raw, _CHANGE_EXPRESSIONS, rest)
    return by_sequence_key(got)
