"""Match-history files: CSV (plain or gzipped) and JSON Lines, read, validated and written.

The CSV format (``docs/replay.md`` and ``shared/data/README.md``) has exactly the columns of
:data:`COLUMNS`, one match a row, in the order the matches were played. JSON Lines files hold one
flat object per line with the same keys (counts as JSON integers), or a team match::

    {"match_id": "m1", "played_at": "2024-05-01T20:00:00", "team_a": ["ann", "bob"],
     "team_b": ["cyd", "dan"], "winner": "a", "stats": {"ann": {"won_by_16": 1}}}

where ``stats`` is optional and maps a player id to that player's counts (missing counts are 0).
Blank lines of a JSON Lines file are ignored. Compression is detected from the gzip magic bytes
and the format from the content (a JSON Lines file starts with ``{``), so the file name does not
matter for reading.

Validation, the same for every reader: counts are integers in ``[0, MAX_COUNT]`` (a CSV count is
digits only: no sign, no decimal point, no ``true``, not empty), player ids and match ids follow
the id rule of :mod:`sedma_elo.core.ids` (normalised to NFC first; 1 to 128 characters; no ``/``,
control or format character; no surrounding whitespace), no player plays against themself,
``winner`` is ``a``, ``b`` or ``draw``, ``played_at`` is ISO 8601 (a date or a date and time, with
a UTC equivalent), ``match_id`` is unique within the file. A bad row raises
:class:`~sedma_elo.errors.HistoryError` naming the field and the 1-based line (the CSV header is
line 1). By default the first bad row (by line) is raised and nothing is
returned; with ``skip_bad=True`` bad rows are left out and returned as a list of errors instead.
Problems with the file itself (unreadable, not gzip, not UTF-8, bad header) are always raised.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.ids import all_valid, check_id, id_problem, normalize_id
from ..core.model import (
    MAX_COUNT,
    MAX_PLAYER_ID_LENGTH,
    STAT_FIELDS,
    Match,
    PlayerStats,
    check_count,
    played_at_problem,
)
from ..errors import HistoryError, ValidationError

__all__ = [
    "COLUMNS",
    "COUNT_COLUMNS",
    "DRAW",
    "WINNER_A",
    "WINNER_B",
    "HistoryArrays",
    "load_history",
    "read_history",
    "read_matches",
    "write_matches",
]

#: The CSV columns, in the order :func:`write_matches` writes them.
COLUMNS = (
    "match_id",
    "played_at",
    "player_a",
    "player_b",
    "winner",
    "bad_moves_a",
    "bad_moves_b",
    "won_by_16_a",
    "won_by_16_b",
    "won_by_24_a",
    "won_by_24_b",
    "won_by_4_and_last_a",
    "won_by_4_and_last_b",
)
#: The columns of :attr:`HistoryArrays.counts`, in order.
COUNT_COLUMNS = COLUMNS[5:]
#: Codes of :attr:`HistoryArrays.winner`.
WINNER_A, WINNER_B, DRAW = 0, 1, 2
_WINNER_CODES = {"a": WINNER_A, "b": WINNER_B, "draw": DRAW}
_WINNER_NAMES = ("a", "b", "draw")
_TEAM_KEYS = ("match_id", "played_at", "team_a", "team_b", "winner", "stats")
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
_GZIP_MAGIC = b"\x1f\x8b"

Int32Array = npt.NDArray[np.int32]
Int8Array = npt.NDArray[np.int8]


@dataclass(frozen=True, eq=False)
class HistoryArrays:
    """A one-against-one match history as columns (what the batch kernel replays).

    Attributes:
        player_ids: the distinct player ids; index ``i`` of the arrays below means ``player_ids[i]``.
        player_a, player_b: int32 player indices, one per match, in file order.
        winner: int8 codes :data:`WINNER_A` (0), :data:`WINNER_B` (1) or :data:`DRAW` (2).
        counts: int32 array of shape ``(n, 8)``, the columns of :data:`COUNT_COLUMNS`.
        match_ids: the match ids, in file order.
        played_at: the ``played_at`` text of every match as written in the file (ISO 8601).
        lines: int64 1-based line number of every match in its file (0 when built from objects).
    """

    player_ids: list[str]
    player_a: Int32Array
    player_b: Int32Array
    winner: Int8Array
    counts: Int32Array
    match_ids: list[str]
    played_at: list[str]
    lines: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.match_ids)

    @property
    def n_players(self) -> int:
        """Number of distinct players."""
        return len(self.player_ids)

    def player_index(self) -> dict[str, int]:
        """Player id to its index in the arrays."""
        return {p: i for i, p in enumerate(self.player_ids)}

    def played_at_datetimes(self) -> list[datetime | None]:
        """``played_at`` parsed with :meth:`datetime.fromisoformat` (a date alone is midnight; "" is None)."""
        cache: dict[str, datetime | None] = {"": None}
        out = []
        for text in self.played_at:
            if text not in cache:
                cache[text] = datetime.fromisoformat(text)
            out.append(cache[text])
        return out

    def to_matches(self) -> list[Match]:
        """The matches as :class:`~sedma_elo.core.model.Match` objects, in order."""
        ids = self.player_ids
        stats_cache: dict[tuple[int, ...], PlayerStats] = {}

        def stats(key: tuple[int, ...]) -> PlayerStats:
            found = stats_cache.get(key)
            if found is None:
                found = stats_cache[key] = PlayerStats(*key)
            return found

        when = self.played_at_datetimes()
        out = []
        counts = self.counts.tolist()
        for i, (a, b, w, c) in enumerate(
            zip(self.player_a.tolist(), self.player_b.tolist(), self.winner.tolist(), counts, strict=True)
        ):
            out.append(
                Match.single(
                    ids[a],
                    ids[b],
                    _WINNER_NAMES[w],  # type: ignore[arg-type]
                    stats((c[0], c[2], c[4], c[6])),
                    stats((c[1], c[3], c[5], c[7])),
                    match_id=self.match_ids[i] or None,
                    played_at=when[i],
                )
            )
        return out

    @classmethod
    def from_matches(cls, matches: Iterable[Match]) -> HistoryArrays:
        """Columns of one-against-one matches (``match_id``/``played_at`` may be missing: empty text).

        Raises:
            ValidationError: a team match (field ``team_a``); arrays hold one player a side.
        """
        index: dict[str, int] = {}
        pa: list[int] = []
        pb: list[int] = []
        winners: list[int] = []
        counts: list[tuple[int, ...]] = []
        match_ids: list[str] = []
        played_at: list[str] = []
        for n, m in enumerate(matches):
            if len(m.team_a) != 1:
                raise ValidationError("team_a", f"match {n}: team matches cannot be held as arrays")
            a, b = m.team_a[0], m.team_b[0]
            pa.append(index.setdefault(a, len(index)))
            pb.append(index.setdefault(b, len(index)))
            winners.append(_WINNER_CODES[m.winner])
            counts.append(_count_row(m))
            match_ids.append(m.match_id or "")
            played_at.append(m.played_at.isoformat() if m.played_at is not None else "")
        n_matches = len(pa)
        return cls(
            player_ids=list(index),
            player_a=np.array(pa, dtype=np.int32),
            player_b=np.array(pb, dtype=np.int32),
            winner=np.array(winners, dtype=np.int8),
            counts=np.array(counts, dtype=np.int32).reshape(n_matches, 8),
            match_ids=match_ids,
            played_at=played_at,
            lines=np.zeros(n_matches, dtype=np.int64),
        )


# ---------------------------------------------------------------------------- public readers
def load_history(path: str | Path, *, skip_bad: bool = False) -> tuple[HistoryArrays, list[HistoryError]]:
    """Read a one-against-one history file into columns, validating every row.

    Returns:
        The arrays of the good rows, in file order, and the errors of the skipped rows (sorted by
        line; always empty unless ``skip_bad``).

    Raises:
        HistoryError: the file cannot be read or has a bad header; a bad row unless ``skip_bad``
            (the first by line); a team match in a JSON Lines file (field ``team_a``: use
            :func:`read_matches`).
    """
    history, errors = read_history(path, skip_bad=skip_bad, teams=False)
    assert isinstance(history, HistoryArrays)
    return history, errors


def read_history(
    path: str | Path, *, skip_bad: bool = False, teams: bool = True
) -> tuple[HistoryArrays | list[Match], list[HistoryError]]:
    """Read a history as :class:`HistoryArrays`, or as matches when it holds team matches.

    What :func:`~sedma_elo.batch.replay.replay` and the ``replay`` command read: the columns for the
    batch kernel whenever every match is one against one.

    Raises:
        HistoryError: as :func:`load_history`; with ``teams=False`` a team match is an error
            (field ``team_a``).
    """
    raw, is_json = _open(path)
    if not is_json:
        return _load_csv(raw, skip_bad)
    matches, lines, errors = _read_jsonl(_as_text(raw), skip_bad)
    for m, line in zip(matches, lines, strict=True):
        if len(m.team_a) != 1:
            if teams:
                return matches, errors
            raise HistoryError(
                "team_a", "team matches cannot be loaded as arrays; use read_matches", line=line
            )
    arrays = HistoryArrays.from_matches(matches)
    object.__setattr__(arrays, "lines", np.array(lines, dtype=np.int64))
    return arrays, errors


def read_matches(path: str | Path, *, skip_bad: bool = False) -> tuple[list[Match], list[HistoryError]]:
    """Read a history file (CSV or JSON Lines, plain or gzipped) into matches, in file order.

    Returns:
        The good matches and the errors of the skipped rows (sorted by line; empty unless
        ``skip_bad``).

    Raises:
        HistoryError: as :func:`load_history` (team matches are fine here).
    """
    text_or_bytes, is_json = _open(path)
    if is_json:
        matches, _, errors = _read_jsonl(_as_text(text_or_bytes), skip_bad)
        return matches, errors
    arrays, errors = _load_csv(text_or_bytes, skip_bad)
    return arrays.to_matches(), errors


def write_matches(path: str | Path, matches: Iterable[Match]) -> None:
    """Write matches as CSV, or as JSON Lines when the name ends with ``.jsonl``/``.ndjson``.

    A name ending with ``.gz`` is gzip-compressed. Every match needs a ``match_id`` and a
    ``played_at`` (the file format requires them) and ids must be unique; team matches need
    JSON Lines. Everything is checked before the file is touched, and the file is replaced
    atomically, so a failed write leaves any old file as it was.

    Raises:
        HistoryError: a match cannot be written (``line`` is the line it would have had), or the
            file cannot be (field ``(file)``: a missing or read-only folder, a full disk...).
    """
    target = Path(path)
    name = target.name.lower()
    as_json = name.endswith(_JSONL_SUFFIXES)
    items = list(matches)
    seen: dict[str, int] = {}
    first_line = 1 if as_json else 2
    for n, m in enumerate(items):
        line = n + first_line
        if not m.match_id:
            raise HistoryError("match_id", "is required in a history file", line=line)
        if m.match_id in seen:
            raise HistoryError(
                "match_id", f"duplicate {m.match_id!r} (first on line {seen[m.match_id]})", line=line
            )
        seen[m.match_id] = line
        if m.played_at is None:
            raise HistoryError("played_at", "is required in a history file", line=line)
        if not as_json and len(m.team_a) != 1:
            raise HistoryError("team_a", "team matches can only be written as JSON Lines (.jsonl)", line=line)
    body = (_jsonl_text(items) if as_json else _csv_text(items)).encode("utf-8")
    if name.endswith(".gz"):
        buffer = io.BytesIO()
        with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz:
            gz.write(body)
        body = buffer.getvalue()
    _write_atomic(target, body)


# ---------------------------------------------------------------------------- writing helpers
def _count_row(m: Match) -> tuple[int, ...]:
    """A one-against-one match's counts in the order of :data:`COUNT_COLUMNS`."""
    sa, sb = m.stats_of(m.team_a[0]), m.stats_of(m.team_b[0])
    return tuple(value for pair in zip(sa.key(), sb.key(), strict=True) for value in pair)


def _csv_text(matches: Sequence[Match]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for m in matches:
        assert m.played_at is not None
        writer.writerow(
            (m.match_id, m.played_at.isoformat(), m.team_a[0], m.team_b[0], m.winner, *_count_row(m))
        )
    return out.getvalue()


def _jsonl_text(matches: Sequence[Match]) -> str:
    lines = []
    for m in matches:
        assert m.played_at is not None
        record: dict[str, Any]
        if len(m.team_a) == 1:
            a, b = m.team_a[0], m.team_b[0]
            record = {"match_id": m.match_id, "played_at": m.played_at.isoformat(), "player_a": a}
            record["player_b"] = b
            record["winner"] = m.winner
            for stat in STAT_FIELDS:
                record[f"{stat}_a"] = getattr(m.stats_of(a), stat)
                record[f"{stat}_b"] = getattr(m.stats_of(b), stat)
        else:
            record = {
                "match_id": m.match_id,
                "played_at": m.played_at.isoformat(),
                "team_a": list(m.team_a),
                "team_b": list(m.team_b),
                "winner": m.winner,
                "stats": {p: m.stats_of(p).to_dict() for p in m.players},
            }
        lines.append(json.dumps(record, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def _write_atomic(target: Path, body: bytes) -> None:
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    except OSError as exc:
        raise HistoryError("(file)", f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise HistoryError("(file)", f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------------- opening
def _open(path: str | Path) -> tuple[bytes, bool]:
    """The file's (decompressed) bytes and whether they are JSON Lines."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise HistoryError("(file)", f"cannot read {path}: {exc.strerror or exc}") from exc
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise HistoryError("(file)", f"{path} is not a valid gzip file: {exc}") from exc
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw, raw.lstrip()[:1] == b"{"


def _as_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise HistoryError("(file)", f"not valid UTF-8 (byte {exc.start})", line=line) from exc


# ---------------------------------------------------------------------------- value checks
# Each returns an error message, or None when the text is valid. They are applied to distinct
# values only, so that a file of a million rows pays for a few thousand checks. Ids are checked
# by the one id rule (sedma_elo.core.ids) after NFC normalisation.
_id_problem = id_problem


def _when_problem(text: str) -> str | None:
    if not text:
        return "must not be empty"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return f"must be an ISO 8601 date or date and time, got {text!r}"
    return played_at_problem(when)


def _winner_problem(text: str) -> str | None:
    return None if text in _WINNER_CODES else f"must be one of 'a', 'b', 'draw', got {text!r}"


def _count_value(text: str) -> int | str:
    """The count, or an error message."""
    if not text:
        return "must not be empty"
    if not (text.isascii() and text.isdigit()):
        return f"must be a non-negative integer, got {text!r}"
    value = int(text)
    if value > MAX_COUNT:
        return f"must be <= {MAX_COUNT}, got {value}"
    return value


# ---------------------------------------------------------------------------- CSV
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
    from . import _parse_jit as jit

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
    from . import _parse_jit as jit

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
def _read_jsonl(text: str, skip_bad: bool) -> tuple[list[Match], list[int], list[HistoryError]]:
    """The good matches, the line of each, and the errors of the bad lines."""
    matches: list[Match] = []
    lines: list[int] = []
    errors: list[HistoryError] = []
    first_seen: dict[str, int] = {}
    for line, raw_line in _numbered_lines(text):
        try:
            match = _match_from_record(raw_line, line)
            assert match.match_id is not None
            if match.match_id in first_seen:
                raise HistoryError(
                    "match_id", f"duplicate {match.match_id!r} (first on line {first_seen[match.match_id]})"
                )
        except HistoryError as exc:
            located = exc if exc.line is not None else exc.at_line(line)
            assert isinstance(located, HistoryError)
            if not skip_bad:
                raise located from None
            errors.append(located)
            continue
        first_seen[match.match_id] = line
        lines.append(line)
        matches.append(match)
    return matches, lines, errors


def _numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def _match_from_record(raw_line: str, line: int) -> Match:
    try:
        record = json.loads(raw_line)
    except json.JSONDecodeError as exc:
        raise HistoryError("(json)", f"not valid JSON: {exc.msg}", line=line) from None
    if not isinstance(record, dict):
        raise HistoryError("(json)", "each line must be a JSON object", line=line)
    try:
        if "team_a" in record or "team_b" in record:
            return _team_match(record)
        return _flat_match(record)
    except HistoryError:
        raise
    except ValidationError as exc:
        raise HistoryError(exc.field, exc.reason, line=line) from None


def _flat_match(record: dict[str, Any]) -> Match:
    for key in record:
        if key not in COLUMNS:
            raise HistoryError(key, f"unknown field (expected: {', '.join(COLUMNS)})")
    for key in COLUMNS:
        if key not in record:
            raise HistoryError(key, "missing field")
    texts = {key: _json_text(key, record[key]) for key in COLUMNS[:5]}
    for key in ("match_id", "player_a", "player_b"):
        texts[key] = check_id(key, texts[key])
    _raise_if("played_at", _when_problem(texts["played_at"]))
    _raise_if("winner", _winner_problem(texts["winner"]))
    counts = [_json_count(key, record[key]) for key in COUNT_COLUMNS]
    return Match.single(
        texts["player_a"],
        texts["player_b"],
        texts["winner"],  # type: ignore[arg-type]
        PlayerStats(counts[0], counts[2], counts[4], counts[6]),
        PlayerStats(counts[1], counts[3], counts[5], counts[7]),
        match_id=texts["match_id"],
        played_at=datetime.fromisoformat(texts["played_at"]),
    )


def _team_match(record: dict[str, Any]) -> Match:
    for key in record:
        if key not in _TEAM_KEYS:
            raise HistoryError(key, f"unknown field (expected: {', '.join(_TEAM_KEYS)})")
    for key in _TEAM_KEYS[:5]:
        if key not in record:
            raise HistoryError(key, "missing field")
    texts = {key: _json_text(key, record[key]) for key in ("match_id", "played_at", "winner")}
    texts["match_id"] = check_id("match_id", texts["match_id"])
    _raise_if("played_at", _when_problem(texts["played_at"]))
    _raise_if("winner", _winner_problem(texts["winner"]))
    teams = []
    for side in ("team_a", "team_b"):
        members = record[side]
        if not isinstance(members, list):
            raise HistoryError(side, "must be a list of one or two player ids")
        teams.append(tuple(check_id(f"{side}[{i}]", pid) for i, pid in enumerate(members)))
    raw_stats = record.get("stats", {})
    if not isinstance(raw_stats, dict):
        raise HistoryError("stats", "must be an object mapping player id to counts")
    stats = {}
    for pid, counts in raw_stats.items():
        if not isinstance(counts, dict):
            raise HistoryError(f"stats.{pid}", "must be an object of counts")
        for key, value in counts.items():
            if key in STAT_FIELDS:
                _json_count(f"stats.{pid}.{key}", value)
        stats[pid] = PlayerStats.from_mapping(counts, prefix=f"stats.{pid}.")
    return Match(
        teams[0],
        teams[1],
        texts["winner"],  # type: ignore[arg-type]
        stats,
        match_id=texts["match_id"],
        played_at=datetime.fromisoformat(texts["played_at"]),
    )


def _raise_if(field: str, problem: str | None) -> None:
    if problem is not None:
        raise HistoryError(field, problem)


def _json_text(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise HistoryError(field, f"must be a string, got {type(value).__name__}")
    return value


def _json_count(field: str, value: object) -> int:
    try:
        return check_count(field, value)
    except ValidationError as exc:
        raise HistoryError(field, exc.reason) from None
