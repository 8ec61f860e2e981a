"""Game records posted to the service: their checks, their storage and job table, their workers.

``POST /v1/games`` checks a record (:mod:`.payload`) and stores it as a queued job
(:mod:`.store`); a worker (:mod:`.worker`, started by ``sedma-elo serve`` or run on any machine
as ``sedma-elo worker``) analyses it off the request path and applies the match through the
ledger's exactly-once path, by the same ``match_id``.
"""

from .payload import GAME_BODY_BYTES, GameIn, GameSubmission, check_game, match_submission
from .store import Claim, GameRow, GameStatus, GameStore, SubmitOutcome

__all__ = [
    "GAME_BODY_BYTES",
    "Claim",
    "GameIn",
    "GameRow",
    "GameStatus",
    "GameStore",
    "GameSubmission",
    "SubmitOutcome",
    "check_game",
    "match_submission",
]
