"""``POST /v1/games`` (a game record, analysed off the request path) and ``GET /v1/games/{match_id}``."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response

from ....errors import NotFoundError
from ....i18n import localized_changes, negotiate
from ...games import GameIn, GameRow, GameStore, check_game
from ..bodies import CheckedJsonRoute
from ..deps import DatabaseDep, GamesKey, LedgerDep, MatchId
from ..game_schemas import AnalysisOut, GameAccepted, GameView
from ..responses import AUTH_ERRORS, BODY_ERRORS, errors

__all__ = ["router", "status_url"]

router = APIRouter(tags=["games"], route_class=CheckedJsonRoute)


def status_url(match_id: str) -> str:
    """Where a posted game's status is read."""
    return f"/v1/games/{quote(match_id, safe='')}"


@router.post(
    "/v1/games",
    status_code=202,
    response_model=GameAccepted,
    responses={
        200: {
            "model": GameAccepted,
            "description": "the same match_id and body again, and the game is finished: its status",
        },
        **errors(
            *AUTH_ERRORS,
            *BODY_ERRORS,
            409,
            notes={
                403: "a key without the games, write or admin scope",
                409: "the match_id was used for a different game, or for a match with statistics",
                422: "invalid body; `detail[].loc` names the field, e.g. `record.rounds[1].moves[17]`",
            },
        ),
    },
)
def post_game(payload: GameIn, _key: GamesKey, db: DatabaseDep, response: Response) -> GameAccepted:
    """Store a finished game's record and queue its analysis; the match is applied once analysed.

    The record is replayed first: an illegal move is refused (422 naming the round and the move)
    and nothing is stored. The answer is 202 with the status URL (also in ``Location``) while the
    game waits or is analysed; a repeat of a finished game answers 200.
    """
    outcome = GameStore(db).submit(check_game(payload))
    game = outcome.game
    url = status_url(game.match_id)
    response.headers["Location"] = url
    if outcome.status == "repeat" and game.status in ("applied", "failed"):
        response.status_code = 200
    return GameAccepted(match_id=game.match_id, status=game.status, status_url=url)


@router.get(
    "/v1/games/{match_id}",
    response_model=GameView,
    responses=errors(404, 422, notes={404: "unknown game"}),
)
def get_game(
    match_id: MatchId,
    db: DatabaseDep,
    ledger: LedgerDep,
    request: Request,
    lang: Annotated[str | None, Query(max_length=35, description="explanation language")] = None,
) -> GameView:
    """A posted game: its status, record, analysis and (once applied) the match's rating changes.

    ``status`` is ``queued``, ``analysing``, ``applied`` or ``failed`` (``reason`` says why).
    """
    game = GameStore(db).get(match_id)
    sequence = changes = None
    if game.status == "applied":
        try:
            view = ledger.get_match(match_id)
        except NotFoundError:  # voided and purged, or an inconsistent copy: the game still shows
            view = None
        if view is not None:
            chosen = negotiate(lang, accept_language=request.headers.get("accept-language"))
            sequence, changes = view["sequence"], localized_changes(view["changes"], chosen)
    return _view(game, sequence, changes)


def _view(game: GameRow, sequence: int | None, changes: list[dict[str, object]] | None) -> GameView:
    applied = game.status == "applied"
    return GameView(
        match_id=game.match_id,
        played_at=game.played_at,
        status=game.status,
        reason=game.reason,
        status_url=status_url(game.match_id),
        match_url=f"/v1/matches/{quote(game.match_id, safe='')}" if applied else None,
        attempts=game.attempts,
        submitted_at=game.created_at,
        updated_at=game.updated_at,
        record=game.record,
        analysis=AnalysisOut.model_validate(game.analysis) if game.analysis is not None else None,
        sequence=sequence,
        changes=changes,
    )
