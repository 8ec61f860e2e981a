"""A history file read a chunk of lines at a time (what ``sedma-elo import`` streams).

:func:`iter_lined` yields what :func:`~sedma_elo.batch.history.read_lined` returns for the whole
file, one chunk of ``chunk`` lines at a time: each chunk's matches as
:class:`~sedma_elo.batch.history.HistoryArrays` (all one against one) or
:class:`~sedma_elo.batch.history.LinedMatches`, with the file's own line numbers, and the errors
of the chunk's skipped rows. Memory holds one chunk, whatever the file's size.

The same readers and checks run on each chunk (a CSV chunk is read with the file's header line in
front), with one difference: a ``match_id`` repeated in a later chunk is not seen here (that would
mean remembering every id of the file); the importer finds it in the ledger it is writing
(:mod:`sedma_elo.service.ledger.bulk_import`) and refuses it with the same message but the first line.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...errors import HistoryError
from .arrays import _GZIP_MAGIC, HistoryArrays
from .checks import _as_text
from .csvfile import _load_csv
from .jsonl import _read_jsonl

if TYPE_CHECKING:
    from . import LinedMatches

__all__ = ["STREAM_CHUNK", "iter_lined"]

#: Lines per chunk: a chunk's rows and the import's arrays of it stay some tens of MB.
STREAM_CHUNK = 50_000


def _shifted(errors: list[HistoryError], by: int) -> list[HistoryError]:
    out = []
    for e in errors:
        moved = e if e.line is None or not by else e.at_line(e.line + by)
        assert isinstance(moved, HistoryError)
        out.append(moved)
    return out


def _lines(handle: Iterable[bytes], path: str | Path) -> Iterator[bytes]:
    """The file's lines (bytes, with their ends); a damaged gzip stream is a :class:`HistoryError`."""
    try:
        yield from handle
    except (OSError, EOFError, zlib.error) as exc:
        raise HistoryError("(file)", f"{path} is not a valid gzip file: {exc}") from exc


def iter_lined(
    path: str | Path, *, skip_bad: bool = False, chunk: int = STREAM_CHUNK
) -> Iterator[tuple[HistoryArrays | LinedMatches, list[HistoryError]]]:
    """The file's matches and skipped rows, ``chunk`` lines at a time, as the module docstring says.

    Raises:
        HistoryError: as :func:`~sedma_elo.batch.history.read_lined`, when the chunk holding the
            problem is read (the file's own problems with the first chunk).
    """
    from . import lined_of

    try:
        with open(path, "rb") as plain:
            gzipped = plain.read(2) == _GZIP_MAGIC
        handle: gzip.GzipFile | io.BufferedReader = (
            gzip.GzipFile(path, "rb") if gzipped else open(path, "rb")  # noqa: SIM115
        )
    except OSError as exc:
        raise HistoryError("(file)", f"cannot read {path}: {exc.strerror or exc}") from exc
    with handle:
        lines = _lines(handle, path)
        # Up to the first line with text: whether it starts with "{" decides the format.
        head: list[bytes] = []
        for line in lines:
            head.append(line)
            if line.strip():
                break
        if head and head[0].startswith(b"\xef\xbb\xbf"):
            head[0] = head[0][3:]
        is_json = b"".join(head).lstrip()[:1] == b"{"
        # ``done``: the file's lines before the chunk's first one (a CSV's header is one of them).
        if is_json:
            header, pending, done = b"", head, 0
        else:
            header, pending, done = (head[0] if head else b""), head[1:], 1
        first = True
        while True:
            block = pending + list(islice(lines, max(0, chunk - len(pending))))
            pending = []
            if not block and not first:
                return
            first = False
            # The chunk's first line is line 1 of what is read (JSON Lines), line 2 after the header (CSV).
            by = done if is_json else done - 1
            try:
                if is_json:
                    matches, at, errors = _read_jsonl(_as_text(b"".join(block)), skip_bad)
                    part: HistoryArrays | LinedMatches = lined_of(matches, [n + by for n in at])
                else:
                    part, errors = _load_csv(header + b"".join(block), skip_bad)
                    object.__setattr__(part, "lines", np.asarray(part.lines, dtype=np.int64) + by)
            except HistoryError as exc:
                raise _shifted([exc], by)[0] from None
            yield part, _shifted(errors, by)
            done += len(block)
            if len(block) < chunk:
                return
