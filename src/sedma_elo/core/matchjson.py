"""The match JSON form shared by the CLI (``sedma-elo rate --match``) and the HTTP service.

One against one::

    {"match_id": "m-1", "played_at": "2026-03-01T18:30:00+00:00",
     "player_a": "alice", "player_b": "bob", "winner": "a",
     "stats": {"a": {"won_by_16": 1}, "b": {"bad_moves": 2}}}

Two against two (``team_a``/``team_b`` instead of ``player_a``/``player_b``; ``stats`` keyed by
player id, as in the HTTP service, JSON Lines histories and ``sedma-elo analyze --json``)::

    {"team_a": ["alice", "carol"], "team_b": ["bob", "dave"], "winner": "draw",
     "stats": {"alice": {"won_by_24": 1}, "dave": {"bad_moves": 3}}}

Fields:
    match_id: optional non-empty string.
    played_at: optional ISO 8601 date or date-time string.
    player_a, player_b: player ids (non-empty strings, at most 128 characters), or
    team_a, team_b: lists of two distinct player ids each.
    winner: ``"a"``, ``"b"`` or ``"draw"``.
    stats: optional; one against one: ``stats.a`` and ``stats.b``, each optional; two against
        two: ``stats.<player id>``, each optional. A player's statistics object
        has the optional non-negative integer counts ``bad_moves``, ``won_by_16``, ``won_by_24``,
        ``won_by_4_and_last`` (missing means 0; ``true``/``false`` and ``1.0`` are refused).

A rate request (:func:`rate_request_from_json`) is a match object with one more optional field,
``ratings``: the ratings before the match by player id (integers within
``[MIN_RATING, MAX_RATING]``); players missing from it start at the rules' initial rating.

Every error is a :class:`~sedma_elo.errors.ValidationError` whose ``field`` is the JSON path of the
bad value, e.g. ``stats.b.bad_moves`` or ``team_a[1]``; unknown fields are refused by name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..errors import ValidationError
from .model import STAT_FIELDS, Match, PlayerStats, Winner, check_count, check_player_id, check_rating

__all__ = [
    "MATCH_FIELDS",
    "match_from_json",
    "match_to_json",
    "parse_json_text",
    "rate_request_from_json",
    "rate_request_to_json",
]

#: The fields a match object may have (one of the two player forms is required).
MATCH_FIELDS = ("match_id", "played_at", "player_a", "player_b", "team_a", "team_b", "winner", "stats")
_REQUEST_FIELDS = (*MATCH_FIELDS, "ratings")
_SIDES = ("a", "b")


def parse_json_text(text: str | bytes) -> Any:
    """Decode JSON text; a syntax error becomes a ValidationError on field ``(json)`` with its line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            "(json)", f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
        ) from exc
    except UnicodeDecodeError as exc:
        raise ValidationError("(json)", "not valid UTF-8") from exc


def match_from_json(data: object) -> Match:
    """Build a validated :class:`~sedma_elo.core.model.Match` from a decoded match object.

    Raises:
        ValidationError: the field names the JSON path of the first bad or unknown value.
    """
    return _match(data, MATCH_FIELDS)


def rate_request_from_json(data: object) -> tuple[Match, dict[str, int]]:
    """Split a decoded rate request into the match and the ratings given for its players.

    Raises:
        ValidationError: a bad match field, or ``ratings.<id>`` that is not an integer in range or
            not a player of the match.
    """
    match = _match(data, _REQUEST_FIELDS)
    assert isinstance(data, Mapping)
    raw = data.get("ratings", {})
    if not isinstance(raw, Mapping):
        raise ValidationError("ratings", f"must be an object of player id to rating, got {_kind(raw)}")
    ratings: dict[str, int] = {}
    for pid, value in raw.items():
        if pid not in match.players:
            raise ValidationError(f"ratings.{pid}", "is not a player of this match")
        ratings[pid] = check_rating(f"ratings.{pid}", value)
    return match, ratings


def match_to_json(match: Match) -> dict[str, Any]:
    """The JSON form of ``match`` (read back by :func:`match_from_json` to an equal match).

    Every player's statistics are written out in full, zero counts included.
    """
    out: dict[str, Any] = {}
    if match.match_id is not None:
        out["match_id"] = match.match_id
    if match.played_at is not None:
        out["played_at"] = match.played_at.isoformat()
    if len(match.team_a) == 1:
        out["player_a"], out["player_b"] = match.team_a[0], match.team_b[0]
        out["winner"] = match.winner
        out["stats"] = {
            "a": match.stats_of(match.team_a[0]).to_dict(),
            "b": match.stats_of(match.team_b[0]).to_dict(),
        }
    else:
        out["team_a"], out["team_b"] = list(match.team_a), list(match.team_b)
        out["winner"] = match.winner
        out["stats"] = {p: match.stats_of(p).to_dict() for p in match.players}
    return out


def rate_request_to_json(match: Match, ratings: Mapping[str, int]) -> dict[str, Any]:
    """The JSON form of a rate request: :func:`match_to_json` plus the given players' ratings."""
    out = match_to_json(match)
    out["ratings"] = {p: ratings[p] for p in match.players if p in ratings}
    return out


# ---------------------------------------------------------------------------- parsing
def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _match(data: object, allowed: tuple[str, ...]) -> Match:
    if not isinstance(data, Mapping):
        raise ValidationError("(root)", f"must be a JSON object, got {_kind(data)}")
    for key in data:
        if key not in allowed:
            raise ValidationError(str(key), f"unknown field (allowed: {', '.join(allowed)})")
    single = "player_a" in data or "player_b" in data
    team = "team_a" in data or "team_b" in data
    if single and team:
        raise ValidationError("team_a", "give either player_a/player_b or team_a/team_b, not both")
    if team:
        team_a = _team(data, "team_a")
        team_b = _team(data, "team_b")
    else:
        team_a = (_player(data, "player_a"),)
        team_b = (_player(data, "player_b"),)
    winner = _winner(data.get("winner"))
    stats = _stats(data.get("stats", {}), team_a, team_b, by_player=team)
    match_id = data.get("match_id")
    if match_id is not None:
        check_player_id("match_id", match_id)
    played_at = _played_at(data.get("played_at"))
    return Match(team_a, team_b, winner, stats, match_id, played_at)


def _player(data: Mapping[str, Any], field: str) -> str:
    if field not in data:
        raise ValidationError(field, "is required")
    return check_player_id(field, data[field])


def _team(data: Mapping[str, Any], field: str) -> tuple[str, ...]:
    if field not in data:
        raise ValidationError(field, "is required")
    raw = data[field]
    if not isinstance(raw, list) or not 1 <= len(raw) <= 2:
        raise ValidationError(field, f"must be an array of one or two player ids, got {_kind(raw)}")
    return tuple(check_player_id(f"{field}[{i}]", pid) for i, pid in enumerate(raw))


def _winner(value: object) -> Winner:
    if value == "a":
        return "a"
    if value == "b":
        return "b"
    if value == "draw":
        return "draw"
    if value is None:
        raise ValidationError("winner", "is required (one of 'a', 'b', 'draw')")
    raise ValidationError("winner", f"must be one of 'a', 'b', 'draw', got {value!r}")


def _stats(
    raw: object, team_a: tuple[str, ...], team_b: tuple[str, ...], *, by_player: bool
) -> dict[str, PlayerStats]:
    keys = team_a + team_b if by_player else _SIDES
    if not isinstance(raw, Mapping):
        expected = "player id" if by_player else "keys 'a' and 'b'"
        raise ValidationError("stats", f"must be an object with {expected}, got {_kind(raw)}")
    for key in raw:
        if key not in keys:
            if by_player:
                raise ValidationError(f"stats.{key}", "is not a player of this match")
            raise ValidationError(f"stats.{key}", "unknown side (allowed: a, b)")
    if by_player:
        return {pid: _player_stats(raw[pid], f"stats.{pid}") for pid in keys if pid in raw}
    return {
        team[0]: _player_stats(raw[side], f"stats.{side}")
        for side, team in (("a", team_a), ("b", team_b))
        if side in raw
    }


def _player_stats(value: object, path: str) -> PlayerStats:
    if not isinstance(value, Mapping):
        raise ValidationError(path, f"must be an object, got {_kind(value)}")
    for key in value:
        if key not in STAT_FIELDS:
            raise ValidationError(f"{path}.{key}", f"unknown field (allowed: {', '.join(STAT_FIELDS)})")
    counts = [check_count(f"{path}.{name}", value.get(name, 0)) for name in STAT_FIELDS]
    return PlayerStats(*counts)


def _played_at(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(
            "played_at", f"must be an ISO 8601 date or date-time string, got {_kind(value)}"
        )
    try:
        return datetime.fromisoformat(value)  # also reads a plain date as midnight
    except ValueError:
        raise ValidationError("played_at", f"must be an ISO 8601 date or date-time, got {value!r}") from None
