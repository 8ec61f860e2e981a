"""The documented answers of the API: one pydantic model per JSON answer, errors included.

The routes build their JSON text themselves (compact, and by hand on the hot write path:
:func:`~sedma_elo.service.ledger.views.response_text`); these models only *describe* it, for
``/openapi.json`` and the clients generated from it. FastAPI does not run them on an answer (a
route returns a ready :class:`~fastapi.responses.Response`), so they cost nothing per request;
tests/service/test_openapi.py validates real answers against them, and the generated client
test reads them through a client built from the schema.

Every model forbids keys it does not name (``additionalProperties: false``): an answer with a
field the schema does not document fails those tests.

:func:`errors` gives a route the documented error answers it can give, each with its model.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..auth.keys import Scope

__all__ = [
    "AUTH_ERRORS",
    "BODY_ERRORS",
    "Answer",
    "Bonus",
    "Bonuses",
    "Change",
    "Error",
    "FieldError",
    "Health",
    "HistoryItem",
    "HistoryPage",
    "Key",
    "KeyList",
    "LeaderboardPage",
    "LeaderboardRow",
    "Live",
    "Malus",
    "MatchSummary",
    "MatchView",
    "NewKey",
    "NotReady",
    "Player",
    "PlayerList",
    "PlayerSummary",
    "RatingMove",
    "Ready",
    "RecentChanges",
    "Score",
    "ServerError",
    "SingleMatch",
    "Stats",
    "TeamMatch",
    "ValidationErrors",
    "Version",
    "VersionList",
    "VersionRef",
    "errors",
]


class Answer(BaseModel):
    """A documented answer: closed, so a key the model does not name is refused."""

    model_config = ConfigDict(extra="forbid")


# --- errors -----------------------------------------------------------------------------------


class Error(Answer):
    """An error answer (400, 401, 403, 404, 409, 413, 415, 429, 503): what went wrong, in words."""

    detail: str


class FieldError(Answer):
    """One refused field: where it is (``["body", "player_b"]``, ``["query", "limit"]``) and why."""

    loc: list[str | int]
    msg: str
    type: str


class ValidationErrors(Answer):
    """The 422 answer: every refused field of the request."""

    detail: list[FieldError]


class ServerError(Answer):
    """The 500 answer to an unexpected error; quote ``request_id`` (also ``X-Request-ID``) to report it."""

    detail: str
    request_id: str


_RETRY_AFTER = {
    "Retry-After": {"description": "seconds to wait before a retry", "schema": {"type": "integer"}}
}
_WWW_AUTHENTICATE = {"WWW-Authenticate": {"description": "`Bearer`", "schema": {"type": "string"}}}
_REQUEST_ID = {
    "X-Request-ID": {"description": "the request's id (as in the body)", "schema": {"type": "string"}}
}

#: Every error answer the API gives: its model, its usual meaning and the headers it carries.
_ERRORS: dict[int, tuple[type[BaseModel], str, dict[str, Any]]] = {
    400: (Error, "the request cannot be served as sent", {}),
    401: (Error, "no API key, or an unknown or revoked one", _WWW_AUTHENTICATE),
    403: (Error, "the key's scope does not allow this request", {}),
    404: (Error, "not found", {}),
    409: (Error, "conflicts with what is stored", {}),
    413: (Error, "request body too large", {}),
    415: (Error, "the body is not JSON", {}),
    422: (ValidationErrors, "invalid request; `detail[].loc` names each refused field", {}),
    429: (Error, "the key's rate limit is used up (`Retry-After`)", _RETRY_AFTER),
    500: (ServerError, "unexpected server error; the body carries the request id", _REQUEST_ID),
    503: (Error, "the service cannot take the request now (`Retry-After`); repeat it", _RETRY_AFTER),
}

#: The answers of a route that needs a key (any scope): missing or unknown, wrong scope, too fast.
AUTH_ERRORS = (401, 403, 429)
#: The answers of a route with a JSON body: too large, not JSON, invalid.
BODY_ERRORS = (413, 415, 422)


def errors(*codes: int, notes: Mapping[int, str] | None = None) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` entries of the error answers ``codes``, and of 500 (any route).

    ``notes`` replaces the usual description of some codes with the route's own meaning
    (``{404: "unknown match"}``).
    """
    notes = notes or {}
    out: dict[int | str, dict[str, Any]] = {}
    for code in sorted({*codes, 500}):
        model, description, headers = _ERRORS[code]
        entry: dict[str, Any] = {"model": model, "description": notes.get(code, description)}
        if headers:
            entry["headers"] = headers
        out[code] = entry
    return out


# --- matches ----------------------------------------------------------------------------------


class Stats(Answer):
    """One player's counts in the match as stored (every count present)."""

    bad_moves: int
    won_by_16: int
    won_by_24: int
    won_by_4_and_last: int


class SingleMatch(Answer):
    """A one-against-one match as stored: the posted body with defaults filled in, times in UTC."""

    match_id: str
    played_at: datetime | None
    player_a: str
    player_b: str
    winner: Literal["a", "b", "draw"]
    stats: dict[str, Stats] = Field(description="keyed by side, `a` and `b`")


class TeamMatch(Answer):
    """A two-against-two match as stored: the posted body with defaults filled in, times in UTC."""

    match_id: str
    played_at: datetime | None
    team_a: list[str]
    team_b: list[str]
    winner: Literal["a", "b", "draw"]
    stats: dict[str, Stats] = Field(description="keyed by player id, every player of the match")


class VersionRef(Answer):
    """The ratings version a match's changes were computed in."""

    id: int
    label: str
    rules: str


class Bonus(Answer):
    """One bonus kind: ``value = min(count * per_round, cap)``."""

    count: int
    per_round: float
    cap: float
    uncapped: float
    value: float
    capped: bool


class Bonuses(Answer):
    """The three bonus kinds of one player's score."""

    won_by_16: Bonus
    won_by_24: Bonus
    won_by_4_and_last: Bonus


class Malus(Answer):
    """The bad-move malus: ``value = min(count * per_bad_move, cap)``, subtracted from the score."""

    count: int
    per_bad_move: float
    cap: float
    uncapped: float
    value: float
    capped: bool


class Score(Answer):
    """How the player's adjusted score was formed: ``clamp(base + bonus_scaled - malus.value)``."""

    base: float
    bonuses: Bonuses
    bonus_total: float
    bonus_scale: float
    bonus_scaled: float
    malus: Malus
    unclamped: float
    adjusted: float
    clamp: Literal["none", "min", "max"]
    clamp_cut: float
    bonus_erased: float
    malus_erased: float


class Change(Answer):
    """One player's explained rating change: ``change = k * (score.adjusted - expected)``."""

    player_id: str
    side: Literal["a", "b"]
    outcome: Literal["win", "loss", "draw"]
    teammates: list[str]
    opponents: list[str]
    rating_before: int
    k: float
    k_reason: str
    team_rating: float
    opponent_rating: float
    expected: float
    score: Score
    change: float
    rating_after: int
    delta: int
    games_played: int | None = Field(
        description="games played before this match, under rules that count them"
    )
    notes: list[str]
    explanation: list[str] = Field(description="the change in plain words (in the asked language)")


class MatchView(Answer):
    """A match in the ledger: its sequence, the version, and every player's explained change."""

    match_id: str
    sequence: int
    played_at: datetime | None
    voided: bool
    void_reason: str | None
    match: SingleMatch | TeamMatch
    ratings_version: VersionRef
    changes: list[Change]


class RatingMove(Answer):
    """One player's rating before and after a match (a change of :class:`MatchSummary`)."""

    player_id: str
    rating_before: int
    rating_after: int
    delta: int


class MatchSummary(Answer):
    """A stored match's summary, the answer to a write sent with ``Prefer: return=minimal``:
    :class:`MatchView` without the match and with each change cut to the ratings."""

    match_id: str
    sequence: int
    played_at: datetime | None
    voided: bool
    void_reason: str | None
    ratings_version: VersionRef
    changes: list[RatingMove]


# --- players and leaderboard ------------------------------------------------------------------


class Player(Answer):
    """A player's standing in a ratings version."""

    player_id: str
    rating: int
    matches_played: int
    last_sequence: int
    ratings_version: int
    provisional: bool


class PlayerSummary(Answer):
    """A player found by a prefix search."""

    player_id: str
    rating: int
    matches_played: int


class PlayerList(Answer):
    """Players by id."""

    items: list[PlayerSummary]


class HistoryItem(Answer):
    """A player's rating before and after one match."""

    sequence: int
    match_id: str
    played_at: datetime | None
    rating_before: int
    rating_after: int
    delta: int


class HistoryPage(Answer):
    """One page of a player's history; ``next_cursor`` is null on the last page."""

    player_id: str
    items: list[HistoryItem]
    next_cursor: str | None


class RecentChanges(Answer):
    """Each asked player's newest changes (newest first), keyed by player id."""

    items: dict[str, list[HistoryItem]]


class LeaderboardRow(Answer):
    """A player's rank and rating."""

    rank: int
    player_id: str
    rating: int
    matches_played: int


class LeaderboardPage(Answer):
    """One page of the leaderboard; ``next_cursor`` is null on the last page."""

    items: list[LeaderboardRow]
    next_cursor: str | None
    ratings_version: int


# --- versions and keys ------------------------------------------------------------------------


class Version(Answer):
    """A ratings version: the rules its ratings were computed with."""

    id: int
    label: str
    rules: str
    active: bool
    created_at: datetime


class VersionList(Answer):
    """Every ratings version."""

    items: list[Version]


class Key(Answer):
    """An API key, without its secret."""

    id: int
    prefix: str
    scope: Scope
    label: str
    created_at: datetime
    revoked_at: datetime | None


class NewKey(Key):
    """A new API key with its secret (``key``), shown this once only."""

    key: str


class KeyList(Answer):
    """Every API key, without secrets."""

    items: list[Key]


# --- probes -----------------------------------------------------------------------------------


class Live(Answer):
    """The process answers HTTP."""

    status: Literal["ok"]


class Health(Answer):
    """The database answers; ``ledger_size`` counts the matches (voided ones included)."""

    status: Literal["ok"]
    ledger_size: int


class Ready(Answer):
    """The database answers queries."""

    status: Literal["ready"]
    database: str


class NotReady(Answer):
    """The database cannot be reached: take the process out of the load balancer."""

    status: Literal["not ready"]
    detail: str
