"""Reading JSON Lines histories (flat one-against-one records and team matches)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ...core.ids import check_id
from ...core.model import (
    STAT_FIELDS,
    Match,
    PlayerStats,
)
from ...errors import HistoryError, ValidationError
from .arrays import _TEAM_KEYS, COLUMNS, COUNT_COLUMNS
from .checks import _json_count, _json_text, _raise_if, _when_problem, _winner_problem


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
