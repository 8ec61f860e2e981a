"""Reading and writing the project's match-history CSV for ``sedma-elo import`` / ``export``.

A stop-gap until ``sedma_elo.history`` lands on main: same columns (``match_id, played_at,
player_a, player_b, winner`` and the four counts with ``_a`` / ``_b`` suffixes), gzip or plain.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from ..errors import HistoryError, SedmaEloError, ValidationError
from ..model import Match, PlayerStats

__all__ = ["COLUMNS", "read_matches", "write_matches"]

_STATS = ("bad_moves", "won_by_16", "won_by_24", "won_by_4_and_last")
COLUMNS = (
    "match_id",
    "played_at",
    "player_a",
    "player_b",
    "winner",
    *(f"{s}_{side}" for side in ("a", "b") for s in _STATS),
)


def _open(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _when(text: str) -> datetime | None:
    if not text:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def read_matches(path: str | Path, *, skip_bad: bool = False) -> tuple[list[Match], list[HistoryError]]:
    """Read a history file; return the matches and (with ``skip_bad``) the errors of skipped rows.

    Raises:
        HistoryError: a bad row (naming its line and field) unless ``skip_bad``.
    """
    out: list[Match] = []
    errors: list[HistoryError] = []
    with _open(Path(path)) as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS[:5] if c not in (reader.fieldnames or [])]
        if missing:
            raise HistoryError(missing[0], "column is missing", line=1)
        for line, row in enumerate(reader, start=2):
            try:
                stats = {}
                for side in ("a", "b"):
                    counts = []
                    for s in _STATS:
                        raw = (row.get(f"{s}_{side}") or "0").strip()
                        try:
                            counts.append(int(raw))
                        except ValueError as exc:
                            raise HistoryError(f"{s}_{side}", f"must be an integer, got {raw!r}") from exc
                    try:
                        stats[side] = PlayerStats(*counts)
                    except ValidationError as exc:
                        raise HistoryError(f"{exc.field}_{side}", exc.reason) from exc
                try:
                    when = _when((row.get("played_at") or "").strip())
                except ValueError as exc:
                    raise HistoryError("played_at", "must be an ISO 8601 date or time") from exc
                winner = (row.get("winner") or "").strip()
                match = Match.single(
                    row["player_a"],
                    row["player_b"],
                    winner,  # type: ignore[arg-type]
                    stats["a"],
                    stats["b"],
                    match_id=row["match_id"],
                    played_at=when,
                )
            except SedmaEloError as exc:
                field = getattr(exc, "field", "row")
                err = HistoryError(field, getattr(exc, "reason", str(exc)), line=line)
                if not skip_bad:
                    raise err from exc
                errors.append(err)
                continue
            out.append(match)
    return out, errors


def write_matches(path: str | Path, matches: Iterable[Match]) -> int:
    """Write one-against-one matches to a CSV file (gzip when the name ends in ``.gz``); return the count.

    Raises:
        HistoryError: a two-against-two match (the CSV format has no columns for it).
    """
    target = Path(path)
    count = 0
    opener = gzip.open if target.suffix == ".gz" else open
    with opener(target, "wt", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for match in matches:
            if len(match.team_a) != 1:
                raise HistoryError(
                    "team_a", f"match {match.match_id}: the CSV format holds one-against-one only"
                )
            when = match.played_at.isoformat().replace("+00:00", "Z") if match.played_at else ""
            a, b = match.team_a[0], match.team_b[0]
            writer.writerow(
                [match.match_id, when, a, b, match.winner]
                + [getattr(match.stats_of(a), s) for s in _STATS]
                + [getattr(match.stats_of(b), s) for s in _STATS]
            )
            count += 1
    return count
