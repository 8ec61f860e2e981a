"""The response models of ``POST /v1/games`` and ``GET /v1/games/{match_id}`` (what OpenAPI documents).

The analysis is :meth:`~sedma_elo.game.analysis.MatchAnalysis.to_dict`, the same JSON as
``sedma-elo analyze GAME --json --details``. The models are closed (:class:`~.responses.Answer`),
as every answer's: an analysis key they do not name is refused, not passed through unseen.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .responses import Answer

__all__ = ["AnalysisOut", "BadMoveOut", "GameAccepted", "GameView", "ReportOut", "RoundOut", "StatsOut"]

Status = Literal["queued", "analysing", "applied", "failed"]


class StatsOut(Answer):
    """The four counts the rating takes for one player."""

    bad_moves: int
    won_by_16: int
    won_by_24: int
    won_by_4_and_last: int


class BadMoveOut(Answer):
    """One bad move: ``round`` and ``move`` count from 1, as in the record's error messages."""

    round: int
    move: int
    player: str = Field(description="the record's player id")
    played: str = Field(description="the card played, or `stop`")
    better: list[str] = Field(description="the moves judged better")
    cost: str = Field(description='what it cost, e.g. "turned a won round into a lost one at 4:4"')
    cost_detail: dict[str, str | int | float | bool] = Field(
        description="the cost as a code and its numbers, for translation, "
        'e.g. {"kind": "lost_round", "score": "4:4"}'
    )
    hand: list[str]
    trick: list[str]
    stock: int
    score: list[int]
    value_lost: float
    share: float
    deals: int
    points_lost: float | None
    method: str = Field(description="`exact`, `all deals` or `sampled`")


class ReportOut(Answer):
    """One player's rounds won, rating statistics and bad moves."""

    player: str
    side: Literal["a", "b"]
    rounds_won: int
    stats: StatsOut
    bad_moves: list[BadMoveOut]


class RoundOut(Answer):
    """One round: points and tricks of side a and side b, who took the last trick, winner and kind."""

    round: int
    points: list[int]
    tricks: list[int]
    last_trick: Literal["a", "b"]
    winner: Literal["a", "b"]
    kind: str


class AnalysisOut(Answer):
    """The analysis of a game record (``sedma-elo analyze --json --details``)."""

    match_id: str | None
    played_at: str | None
    players: list[str]
    winner: Literal["a", "b"]
    match_points: list[int]
    rounds: list[RoundOut]
    judged_moves: int
    unjudged_moves: int
    reports: list[ReportOut]
    bad_moves: list[BadMoveOut]


class GameAccepted(Answer):
    """The answer to a posted game: its status and where to follow it."""

    match_id: str
    status: Status
    status_url: str


class GameView(Answer):
    """A posted game: status, record, analysis and, once applied, the match's rating changes."""

    match_id: str
    played_at: str | None
    status: Status
    reason: str | None = Field(description="why the game failed (or why its last attempt was retried)")
    status_url: str
    match_url: str | None = Field(description="the applied match (`GET /v1/matches/{match_id}`)")
    attempts: int
    submitted_at: str
    updated_at: str
    record: dict[str, Any]
    analysis: AnalysisOut | None
    sequence: int | None = Field(description="the match's ledger sequence, once applied")
    changes: list[dict[str, Any]] | None = Field(
        description="the explained rating changes of the applied match (as `GET /v1/matches/{id}`)"
    )
