"""Builders shared by the game tests of the service: records, bodies and the expected ratings."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from sedma_elo import rate
from sedma_elo.core.model import Match
from sedma_elo.game.analysis import analyze
from sedma_elo.game.bots import make_bot, play_match
from sedma_elo.game.record import parse_record, record_to_dict

EXAMPLE = Path(__file__).parents[2] / "src" / "sedma_elo" / "game" / "examples" / "example_match.json"
PLAYED_AT = "2026-11-29T12:00:00Z"


def example_record() -> dict[str, Any]:
    """The shipped example record (alice against bob; two exact bad moves), without its own id."""
    data: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    data.pop("match_id")
    return data


def bot_record(seed: int, players: tuple[str, ...] = ("carol", "dave")) -> dict[str, Any]:
    """A whole match between two greedy bots, as a record dict (target 3)."""
    bots = [make_bot("greedy", seed * 2 + 1, 8), make_bot("greedy", seed * 2 + 2, 8)]
    played = play_match(bots, list(players), seed)
    out = record_to_dict(played.record)
    out.pop("match_id", None)
    return out


def game_body(match_id: str, record: dict[str, Any], played_at: str | None = PLAYED_AT) -> dict[str, Any]:
    """A ``POST /v1/games`` body."""
    return {"match_id": match_id, "played_at": played_at, "record": copy.deepcopy(record)}


def analysed_match(match_id: str, record: dict[str, Any]) -> Match:
    """The match the analysis of ``record`` gives (what the service must rate), computed here directly."""
    m = analyze(parse_record(record)).to_match()
    return Match(m.team_a, m.team_b, m.winner, dict(m.stats), match_id)


def expected_ratings(matches: list[Match]) -> dict[str, int]:
    """Everyone's rating after ``matches`` in order, by :func:`sedma_elo.rate` from the initial ratings."""
    ratings: dict[str, int] = {}
    for match in matches:
        result = rate(match, ratings)
        ratings.update({c.player_id: c.rating_after for c in result.changes})
    return ratings
