"""Reading CSV histories: the compiled fast path, the csv module's general path, column checks."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from ...core.ids import all_valid, normalize_id
from ...core.model import (
    MAX_COUNT,
    MAX_PLAYER_ID_LENGTH,
)
from ...errors import HistoryError
from .arrays import _WINNER_CODES, COLUMNS, COUNT_COLUMNS, HistoryArrays, Int32Array
from .checks import _as_text, _count_value, _id_problem, _when_problem, _winner_problem


class _Rows:
    """Per-row bookkeeping while validating columns: the first problem of every bad row."""

    def __init__(self, lines: Sequence[int]) -> None:
        self.lines = lines
        self.bad: dict[int, HistoryError] = {}

    def mark(self, row: int, field: str, message: str) -> None:
        if row not in self.bad:
            self.bad[row] = HistoryError(field, message, line=self.lines[row])


@dataclass
class _Columns:
    """Tokenised CSV rows: text columns by name, line numbers and the malformed rows."""

    text: dict[str, list[str]]
    lines: Sequence[int]
    structural: list[HistoryError]


def _load_csv(raw: bytes, skip_bad: bool) -> tuple[HistoryArrays, list[HistoryError]]:
    fast = _fast_csv(raw, skip_bad)
    if fast is not None:
        return fast
    return _validate_columns(_parse_csv(_as_text(raw)), skip_bad)


def _check_header(header: Sequence[str]) -> None:
    if not header or header == [""]:
        raise HistoryError("(header)", f"empty file: expected the columns {', '.join(COLUMNS)}", line=1)
    seen = set()
    for name in header:
        if name not in COLUMNS:
            raise HistoryError(name or "(header)", f"unknown column (expected: {', '.join(COLUMNS)})", line=1)
        if name in seen:
            raise HistoryError(name, "column appears twice", line=1)
        seen.add(name)
    for name in COLUMNS:
        if name not in seen:
            raise HistoryError(name, "missing column", line=1)


def _parse_csv(text: str) -> _Columns:
    """The general reader: any quoting, line endings and column order (the csv module)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, [])
    except csv.Error as exc:
        raise HistoryError("(header)", f"malformed CSV: {exc}", line=1) from exc
    _check_header(header)
    width = len(COLUMNS)
    rows: list[list[str]] = []
    lines: list[int] = []
    structural: list[HistoryError] = []
    previous_end = reader.line_num
    while True:
        start = previous_end + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            structural.append(HistoryError("(row)", f"malformed CSV: {exc}", line=start))
            previous_end = reader.line_num
            continue
        previous_end = reader.line_num
        if not row:
            continue  # a blank line
        if len(row) != width:
            structural.append(HistoryError("(row)", f"expected {width} fields, got {len(row)}", line=start))
            continue
        rows.append(row)
        lines.append(start)
    order = [header.index(name) for name in COLUMNS]
    transposed = list(zip(*rows, strict=True)) if rows else [() for _ in COLUMNS]
    text_columns = {name: list(transposed[j]) for name, j in zip(COLUMNS, order, strict=True)}
    return _Columns(text_columns, lines, structural)


def _fast_csv(raw: bytes, skip_bad: bool) -> tuple[HistoryArrays, list[HistoryError]] | None:
    """The arrays of a simple, valid CSV file, or None to use the general reader.

    Handles ASCII files in the standard column order, without quotes or blank lines (LF or CRLF
    line ends). A compiled scanner splits fields, parses counts and hashes the text fields; ids
    are interned and checked through their distinct values only. The one row problem handled here
    is a player against themself (reported like the general reader does); anything else sends the
    whole file to the general reader, which finds and explains it.
    """
    header = ",".join(COLUMNS).encode()
    after = raw[len(header) : len(header) + 2]
    if not raw.startswith(header) or not (after[:1] == b"\n" or after == b"\r\n"):
        return None
    if not raw.isascii():
        return None
    body = raw[raw.index(b"\n") + 1 :]
    if not body:
        return None
    if not body.endswith(b"\n"):
        body += b"\n"
    from .. import _parse_jit as jit

    buf = np.frombuffer(body, dtype=np.uint8)
    ok, starts, ends, hashes, winners, counts = jit.scan(buf, len(COLUMNS), 4, MAX_COUNT)
    if not ok:
        return None
    lines = np.arange(2, len(winners) + 2, dtype=np.int64)
    text = body.decode("ascii")
    # A player against themself: the only row problem handled here (the ATP file has four).
    self_play = hashes[:, 2] == hashes[:, 3]
    errors: list[HistoryError] = []
    if self_play.any():
        rows = np.flatnonzero(self_play)
        if not jit.same_bytes(buf, starts[rows, 2], ends[rows, 2], starts[rows, 3], ends[rows, 3]):
            return None
        if not skip_bad:
            return None  # the general reader raises the first bad line, whatever its problem
        message = "a player cannot play against themself"
        errors = [HistoryError("player_b", message, line=int(lines[i])) for i in rows]
        keep = ~self_play
        starts, ends, hashes, winners, counts, lines = (
            starts[keep],
            ends[keep],
            hashes[keep],
            winners[keep],
            counts[keep],
            lines[keep],
        )
    n = len(winners)
    match_ids = _fast_match_ids(buf, text, starts[:, 0], ends[:, 0], hashes[:, 0])
    played = _fast_intern(jit, buf, text, starts[:, 1], ends[:, 1], hashes[:, 1], _when_problem)
    both = _fast_intern(
        jit,
        buf,
        text,
        starts[:, 2:4].ravel(),
        ends[:, 2:4].ravel(),
        hashes[:, 2:4].ravel(),
        _id_problem,
    )
    if match_ids is None or played is None or both is None:
        return None
    played_values, played_index = played
    player_ids, player_index = both
    pairs = player_index.reshape(n, 2)
    return (
        HistoryArrays(
            player_ids=player_ids,
            player_a=np.ascontiguousarray(pairs[:, 0]),
            player_b=np.ascontiguousarray(pairs[:, 1]),
            winner=winners,
            counts=np.ascontiguousarray(counts),
            match_ids=match_ids,
            played_at=list(map(played_values.__getitem__, played_index.tolist())),
            lines=lines,
        ),
        errors,
    )


def _fast_match_ids(
    buf: npt.NDArray[np.uint8],
    text: str,
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    hashes: npt.NDArray[np.uint64],
) -> list[str] | None:
    """The match ids if all are valid and their hashes are distinct (so the ids are), else None."""
    n = len(starts)
    if n == 0:
        return None
    from .. import _parse_jit as jit

    _, first = jit.intern(hashes)
    if first.size != n:  # equal hashes: a duplicate id (or a collision); the general reader decides
        return None
    length = ends - starts
    if length.min() < 1 or length.max() > MAX_PLAYER_ID_LENGTH:
        return None
    # The scanner refused control bytes and "/" and the text is ASCII (so NFC): what is left of
    # the id rule is the surrounding whitespace, which in ASCII can only be a space.
    if np.any(buf[starts] == 32) or np.any(buf[ends - 1] == 32):
        return None
    return [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


def _fast_intern(
    jit: Any,
    buf: npt.NDArray[np.uint8],
    text: str,
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    hashes: npt.NDArray[np.uint64],
    check: Callable[[str], str | None],
) -> tuple[list[str], Int32Array] | None:
    """Distinct values in order of first appearance and each field's index among them, or None.

    None when a distinct value fails ``check`` or two different texts share a hash.
    """
    index, first = jit.intern(np.ascontiguousarray(hashes))
    representative = first[index]
    if not jit.same_bytes(buf, starts, ends, starts[representative], ends[representative]):
        return None
    values = [text[s:e] for s, e in zip(starts[first].tolist(), ends[first].tolist(), strict=True)]
    if any(check(v) is not None for v in values):
        return None
    return values, index


_TEXT_CHECKS = {
    "match_id": _id_problem,
    "played_at": _when_problem,
    "player_a": _id_problem,
    "player_b": _id_problem,
    "winner": _winner_problem,
}


def _validate_columns(columns: _Columns, skip_bad: bool) -> tuple[HistoryArrays, list[HistoryError]]:
    """Check every value (each distinct value once) and every row; build the arrays of good rows."""
    text, lines = columns.text, columns.lines
    n = len(lines)
    for name in ("match_id", "player_a", "player_b"):
        text[name] = _nfc_column(text[name])
    rows = _Rows(lines)
    parsed_counts: dict[str, dict[str, int]] = {}
    distinct = {name: set(text[name]) for name in _TEXT_CHECKS}
    for name in COLUMNS:
        if name in _TEXT_CHECKS:
            check = _TEXT_CHECKS[name]
            seen = distinct[name]
            problems = {}
            if check is not _id_problem or not all_valid(seen):
                problems = {v: p for v in seen if (p := check(v)) is not None}
        else:
            values = {v: _count_value(v) for v in set(text[name])}
            problems = {v: p for v, p in values.items() if isinstance(p, str)}
            parsed_counts[name] = {v: p for v, p in values.items() if isinstance(p, int)}
        if problems:
            for i, value in enumerate(text[name]):
                problem = problems.get(value)
                if problem is not None:
                    rows.mark(i, name, problem)
    col_a, col_b = text["player_a"], text["player_b"]
    index = {p: i for i, p in enumerate(_first_seen_ids(col_a, col_b))}
    pa = np.fromiter(map(index.__getitem__, col_a), dtype=np.int32, count=n)
    pb = np.fromiter(map(index.__getitem__, col_b), dtype=np.int32, count=n)
    for i in np.flatnonzero(pa == pb).tolist():
        rows.mark(i, "player_b", "a player cannot play against themself")
    match_ids = text["match_id"]
    if len(distinct["match_id"]) != n:
        first_seen: dict[str, int] = {}
        for i, match_id in enumerate(match_ids):
            if i in rows.bad:
                continue
            if match_id in first_seen:
                first = lines[first_seen[match_id]]
                rows.mark(i, "match_id", f"duplicate {match_id!r} (first on line {first})")
            else:
                first_seen[match_id] = i
    errors = sorted([*columns.structural, *rows.bad.values()], key=lambda e: e.line or 0)
    if errors and not skip_bad:
        raise errors[0]
    counts = np.empty((n, 8), dtype=np.int32)
    for j, name in enumerate(COUNT_COLUMNS):
        lookup = parsed_counts[name]
        counts[:, j] = [lookup.get(v, 0) for v in text[name]]
    line_array = np.asarray(lines, dtype=np.int64)
    if rows.bad:
        keep = np.ones(n, dtype=bool)
        keep[list(rows.bad)] = False
        kept = np.flatnonzero(keep).tolist()
        text = {name: [col[i] for i in kept] for name, col in text.items()}
        col_a, col_b = text["player_a"], text["player_b"]
        index = {p: i for i, p in enumerate(_first_seen_ids(col_a, col_b))}
        n = len(kept)
        pa = np.fromiter(map(index.__getitem__, col_a), dtype=np.int32, count=n)
        pb = np.fromiter(map(index.__getitem__, col_b), dtype=np.int32, count=n)
        counts, line_array = counts[keep], line_array[keep]
    return (
        HistoryArrays(
            player_ids=list(index),
            player_a=pa,
            player_b=pb,
            winner=np.fromiter(map(_WINNER_CODES.__getitem__, text["winner"]), dtype=np.int8, count=n),
            counts=np.ascontiguousarray(counts),
            match_ids=text["match_id"],
            played_at=text["played_at"],
            lines=line_array,
        ),
        errors,
    )


def _first_seen_ids(col_a: Sequence[str], col_b: Sequence[str]) -> list[str]:
    """Distinct ids in order of first appearance (match by match, side a first)."""
    return list(dict.fromkeys(chain.from_iterable(zip(col_a, col_b, strict=True))))


def _nfc_column(values: list[str]) -> list[str]:
    """``values`` with every id in Unicode NFC (the same list when all are ASCII)."""
    if "".join(values).isascii():
        return values
    normal = {v: normalize_id(v) for v in set(values)}
    return [normal[v] for v in values]


# ---------------------------------------------------------------------------- JSON Lines
