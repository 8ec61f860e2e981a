"""Writing histories (CSV or JSON Lines, atomically)."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ...core.model import (
    STAT_FIELDS,
    Match,
)
from ...errors import HistoryError
from .arrays import _JSONL_SUFFIXES, COLUMNS, _count_row


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
