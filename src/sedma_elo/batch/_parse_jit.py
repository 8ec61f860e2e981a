"""numba scanner for the fast path of the CSV reader (imported lazily by :mod:`sedma_elo.batch.history`).

It only handles the simple, valid case and reports anything else as a failure, so that the
general reader can find and explain the problem: it never decides that a row is bad.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True)
def scan(buf, width, n_hashed, max_count):  # type: ignore[no-untyped-def]
    """Split ``buf`` (rows ending with LF, fields with commas) into fields and parse what it can.

    Returns ``(ok, starts, ends, hashes, winners, counts)``: offsets ``(n, n_hashed)`` and FNV-1a
    hashes of the first ``n_hashed`` fields (the text fields; the others are parsed here, so their
    offsets are not kept: two fewer 8-byte arrays a field to write and copy), winner codes of
    field ``n_hashed`` and the count fields after it. ``ok`` is False on any irregularity (wrong
    field count, a count that is not 1 to 7 digits or is above ``max_count``, an unknown winner,
    a carriage return, a quote, a control byte or a ``/``).
    """
    n = 0
    for i in range(buf.size):
        if buf[i] == 10:
            n += 1
    starts = np.empty((n, n_hashed), dtype=np.int64)
    ends = np.empty((n, n_hashed), dtype=np.int64)
    hashes = np.empty((n, n_hashed), dtype=np.uint64)
    winners = np.empty(n, dtype=np.int8)
    counts = np.empty((n, width - n_hashed - 1), dtype=np.int32)
    row = 0
    field = 0
    start = 0
    h = _FNV_OFFSET
    i = 0
    size = buf.size
    while i < size:
        c = buf[i]
        end_of_line = c == 10
        if c == 13:
            # CRLF ends a line; a lone CR is left to the general reader.
            if i + 1 >= size or buf[i + 1] != 10:
                return False, starts, ends, hashes, winners, counts
            end_of_line = True
        if c == 44 or end_of_line:
            if field >= width:
                return False, starts, ends, hashes, winners, counts
            if field < n_hashed:
                starts[row, field] = start
                ends[row, field] = i
                hashes[row, field] = h
            elif field == n_hashed:
                length = i - start
                if length == 1 and buf[start] == 97:
                    winners[row] = 0
                elif length == 1 and buf[start] == 98:
                    winners[row] = 1
                elif (
                    length == 4
                    and buf[start] == 100
                    and buf[start + 1] == 114
                    and buf[start + 2] == 97
                    and buf[start + 3] == 119
                ):
                    winners[row] = 2
                else:
                    return False, starts, ends, hashes, winners, counts
            else:
                length = i - start
                if length < 1 or length > 7:
                    return False, starts, ends, hashes, winners, counts
                value = np.int64(0)
                for j in range(start, i):
                    d = np.int64(buf[j]) - 48
                    if d < 0 or d > 9:
                        return False, starts, ends, hashes, winners, counts
                    value = value * 10 + d
                if value > max_count:
                    return False, starts, ends, hashes, winners, counts
                counts[row, field - n_hashed - 1] = value
            h = _FNV_OFFSET
            if end_of_line:
                if field != width - 1:
                    return False, starts, ends, hashes, winners, counts
                row += 1
                field = 0
                if c == 13:
                    i += 1
            else:
                field += 1
            start = i + 1
        elif c == 34:
            return False, starts, ends, hashes, winners, counts
        elif c < 32 or c == 127 or c == 47:
            # A control byte or "/" in any field: refused in ids, never valid in the other fields.
            return False, starts, ends, hashes, winners, counts
        else:
            h = (h ^ np.uint64(c)) * _FNV_PRIME
        i += 1
    return True, starts, ends, hashes, winners, counts


@njit(cache=True)
def same_bytes(buf, starts, ends, rep_starts, rep_ends):  # type: ignore[no-untyped-def]
    """True when every field ``[starts[i], ends[i])`` equals its representative's bytes."""
    for i in range(starts.size):
        s, e = starts[i], ends[i]
        rs, re = rep_starts[i], rep_ends[i]
        if e - s != re - rs:
            return False
        for j in range(e - s):
            if buf[s + j] != buf[rs + j]:
                return False
    return True


@njit(cache=True)
def intern(hashes):  # type: ignore[no-untyped-def]
    """Number distinct hashes in order of first appearance (an open-addressing table, one pass).

    Returns ``(index, first)``: ``index[i]`` is the number of ``hashes[i]``'s value, ``first[k]``
    the position where value ``k`` first appears.
    """
    n = hashes.size
    capacity = 1
    while capacity < 2 * n + 2:
        capacity *= 2
    mask = capacity - 1
    slots = np.full(capacity, -1, dtype=np.int64)
    keys = np.empty(capacity, dtype=np.uint64)
    index = np.empty(n, dtype=np.int32)
    first = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        h = hashes[i]
        slot = np.int64(h & np.uint64(mask))
        while True:
            if slots[slot] < 0:
                slots[slot] = count
                keys[slot] = h
                first[count] = i
                index[i] = count
                count += 1
                break
            if keys[slot] == h:
                index[i] = slots[slot]
                break
            slot = (slot + 1) & mask
    return index, first[:count]
