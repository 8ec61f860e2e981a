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

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.model import Match
from ...errors import HistoryError
from .arrays import _GZIP_MAGIC, COLUMNS, COUNT_COLUMNS, DRAW, WINNER_A, WINNER_B, HistoryArrays
from .checks import _as_text
from .csvfile import _load_csv
from .jsonl import _read_jsonl
from .stream import STREAM_CHUNK, iter_lined
from .write import write_matches

__all__ = [
    "COLUMNS",
    "COUNT_COLUMNS",
    "DRAW",
    "STREAM_CHUNK",
    "WINNER_A",
    "WINNER_B",
    "HistoryArrays",
    "LinedMatches",
    "iter_lined",
    "lined_of",
    "load_history",
    "read_history",
    "read_lined",
    "read_matches",
    "write_matches",
]


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
    source, errors = read_lined(path, skip_bad=skip_bad)
    if isinstance(source, HistoryArrays):
        return source, errors
    if not teams:
        line = next(n for m, n in zip(source.matches, source.lines, strict=True) if len(m.team_a) != 1)
        raise HistoryError("team_a", "team matches cannot be loaded as arrays; use read_matches", line=line)
    return source.matches, errors


@dataclass(frozen=True, eq=False)
class LinedMatches:
    """Matches of a history that holds team matches, with the 1-based file line of each."""

    matches: list[Match]
    lines: list[int]


def read_lined(
    path: str | Path, *, skip_bad: bool = False
) -> tuple[HistoryArrays | LinedMatches, list[HistoryError]]:
    """Read a history as :class:`HistoryArrays` (every match one against one) or as
    :class:`LinedMatches`: either way each match keeps its file line (what ``import`` reads).

    Raises:
        HistoryError: as :func:`load_history` (team matches are fine here).
    """
    raw, is_json = _open(path)
    if not is_json:
        return _load_csv(raw, skip_bad)
    matches, lines, errors = _read_jsonl(_as_text(raw), skip_bad)
    return lined_of(matches, lines), errors


def lined_of(matches: list[Match], lines: list[int]) -> HistoryArrays | LinedMatches:
    """Matches read from a JSON Lines file with their lines: as arrays unless one is a team match."""
    if any(len(m.team_a) != 1 for m in matches):
        return LinedMatches(matches, lines)
    arrays = HistoryArrays.from_matches(matches)
    object.__setattr__(arrays, "lines", np.array(lines, dtype=np.int64))
    return arrays


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
