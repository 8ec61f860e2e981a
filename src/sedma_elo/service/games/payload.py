"""The body of ``POST /v1/games``, its checks, its canonical text, and the match it becomes.

A game is ``{"match_id", "played_at", "record": <sedma-game/1>}``. The record is parsed and every
move replayed before anything is stored (a :class:`~sedma_elo.errors.ValidationError` names
``record.rounds[r].moves[i]`` and says "move i+1 of round r+1"); the rating statistics are never
taken from the client: the analysis derives them (:func:`match_submission`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from ...errors import GameRecordError, ValidationError
from ...game.analysis import MatchAnalysis
from ...game.record import GameRecord, parse_record, record_to_dict, replay
from ..payload import Id, MatchIn, PlayedAt, Submission, canonical_json, submission_from_payload

__all__ = ["GAME_BODY_BYTES", "GameIn", "GameSubmission", "check_game", "match_submission"]

#: The body limit of ``POST /v1/games``: a long match's record with every deck written out fits.
GAME_BODY_BYTES = 512 * 1024

_EXAMPLE_RECORD: dict[str, Any] = {
    "format": "sedma-game/1",
    "players": ["alice", "bob"],
    "seed": 7,
    "rounds": [{"moves": [{"player": 0, "move": "Ah"}, {"player": 1, "move": "7c"}]}],
}


class GameIn(BaseModel):
    """A finished game as posted to ``POST /v1/games``: its id, when it was played, its record.

    The players are the record's ``players`` (seat order; four players: seats 0 and 2 against 1
    and 3). The record's own ``match_id``, when given, must equal ``match_id``.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"match_id": "g-1", "played_at": "2026-11-29T12:00:00Z", "record": _EXAMPLE_RECORD}]
        },
    )

    match_id: Id
    played_at: PlayedAt | None = None
    record: dict[str, Any] = Field(description="a sedma-game/1 record (docs/game.md)")


@dataclass(frozen=True, slots=True)
class GameSubmission:
    """A checked game: the parsed record, its canonical request text and that text's hash."""

    match_id: str
    played_at: str | None
    record: GameRecord
    body: str
    body_hash: str


def _record_error(exc: GameRecordError) -> ValidationError:
    return ValidationError(f"record.{exc.field}", exc.reason)


def check_game(payload: GameIn) -> GameSubmission:
    """Parse and replay the record, check it against the body, and build the canonical text.

    Raises:
        ValidationError: the record is malformed, a move is illegal (``record.rounds[r].moves[i]``),
            the match is unfinished, or the record's ``match_id`` differs from the body's.
    """
    try:
        record = parse_record(payload.record)
        result = replay(record)
    except GameRecordError as exc:
        raise _record_error(exc) from None
    if record.match_id is not None and record.match_id != payload.match_id:
        raise ValidationError("record.match_id", f"differs from the body's match_id {payload.match_id!r}")
    when: Any = payload.played_at
    if when is None and record.played_at is not None:
        when = record.played_at  # the body's time wins; the record's is taken when the body has none
    # The match the analysis will become, checked now (ids, time) with empty statistics, so a
    # queued game cannot be refused later for its form.
    try:
        skeleton = _match_payload(record, payload.match_id, when, "ab"[result.winner], {})
    except PydanticValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = "played_at" if payload.played_at is not None else "record.played_at"
        raise ValidationError(field, str(first["msg"])) from None
    played_at = submission_from_payload(skeleton).played_at
    body = canonical_json(
        {"match_id": payload.match_id, "played_at": played_at, "record": record_to_dict(record)}
    )
    return GameSubmission(
        payload.match_id, played_at, record, body, hashlib.sha256(body.encode()).hexdigest()
    )


def _match_payload(
    record: GameRecord, match_id: str, played_at: Any, winner: str, stats: dict[str, Any]
) -> MatchIn:
    players = record.players
    if len(players) == 2:
        return MatchIn.model_validate(
            {
                "match_id": match_id,
                "played_at": played_at,
                "player_a": players[0],
                "player_b": players[1],
                "winner": winner,
                "stats": stats,
            }
        )
    return MatchIn.model_validate(
        {
            "match_id": match_id,
            "played_at": played_at,
            "team_a": [players[0], players[2]],
            "team_b": [players[1], players[3]],
            "winner": winner,
            "stats": stats,
        }
    )


def match_submission(match_id: str, played_at: str | None, analysis: MatchAnalysis) -> Submission:
    """The ledger submission of an analysed game: its winner and the statistics the analysis derived.

    It is what ``POST /v1/matches`` would store for the same match with these statistics, so the
    ledger's exactly-once rule covers games too.
    """
    stats = {key: report.stats().to_dict() for key, report in _stats_keys(analysis)}
    return submission_from_payload(
        _match_payload(analysis.record, match_id, played_at, analysis.winner, stats)
    )


def _stats_keys(analysis: MatchAnalysis) -> list[tuple[str, Any]]:
    """Each report under its key in the match body: side ``a``/``b`` (two players) or the player id."""
    if len(analysis.players) == 2:
        return [("ab"[p.side], p) for p in analysis.players]
    return [(p.player, p) for p in analysis.players]
