"""Players: prefix search, one player's standing, their history, and recent changes of many."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ....core.ids import ID_PREFIX_PATTERN
from ....core.provisional import is_provisional
from ...ledger import MAX_PAGE, MAX_RECENT, HistoryOrder, PlayerRecord
from ...payload import Id
from ..deps import LedgerDep, PlayerId, ServicesDep, VersionQuery
from ..responses import HistoryPage, Player, PlayerList, RecentChanges, errors
from ..schemas import json_response

__all__ = ["player_body", "router"]

router = APIRouter(tags=["players"])


@router.get("/v1/players", response_model=PlayerList, responses=errors(422))
def search_players(
    ledger: LedgerDep,
    prefix: Annotated[
        str,
        Query(
            min_length=1,
            max_length=128,
            pattern=ID_PREFIX_PATTERN,
            description="the start of the player id (case-sensitive)",
        ),
    ],
    limit: Annotated[int, Query(ge=1, le=MAX_RECENT)] = 20,
) -> Response:
    """Players whose id starts with ``prefix``, by id, with their rating (active version)."""
    return json_response({"items": ledger.search_players(prefix, limit)})


@router.get(
    "/v1/players/{player_id}",
    response_model=Player,
    responses=errors(404, 422, notes={404: "unknown player (or no match in that version)"}),
)
async def get_player(player_id: PlayerId, services: ServicesDep, version: VersionQuery = None) -> Response:
    """A player's rating, matches, last sequence and whether the rating is still provisional.

    ``provisional`` is true below ``PROVISIONAL_MATCHES`` matches (default 10) in that version.
    """
    # Hot path: one indexed lookup, awaited (the loop serves others while PostgreSQL answers).
    record = await services.ledger.get_player_async(player_id, version)
    return Response(player_body(record, services.settings.provisional_matches), media_type="application/json")


def player_body(record: PlayerRecord, provisional_matches: int) -> bytes:
    """The JSON body of ``GET /v1/players/{player_id}`` for ``record`` (also the read cache's)."""
    provisional = is_provisional(record.matches_played, provisional_matches)
    return json.dumps({**record.to_dict(), "provisional": provisional}, separators=(",", ":")).encode()


@router.get(
    "/v1/players/{player_id}/history",
    response_model=HistoryPage,
    responses=errors(404, 422, notes={404: "unknown player"}),
)
async def get_history(
    player_id: PlayerId,
    ledger: LedgerDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    order: Annotated[
        HistoryOrder,
        Query(description="asc: oldest first (default); desc: newest first. A cursor keeps its order."),
    ] = "asc",
) -> Response:
    """The player's rating after each match, oldest or newest first; follow ``next_cursor`` for more."""
    # Awaited in one statement (no thread of the pool, no pooled SQLAlchemy connection).
    page = await ledger.player_history_async(player_id, limit, cursor, order)
    return json_response({"player_id": page.player_id, "items": page.items, "next_cursor": page.next_cursor})


@router.get("/v1/recent-changes", response_model=RecentChanges, responses=errors(422))
def get_recent_changes(
    ledger: LedgerDep,
    players: Annotated[
        list[Id],
        Query(max_length=MAX_RECENT, description=f"player ids, repeated (at most {MAX_RECENT})"),
    ],
    n: Annotated[int, Query(ge=1, le=MAX_RECENT, description="changes per player")] = 10,
    version: VersionQuery = None,
) -> Response:
    """Each player's last ``n`` rating changes, newest first (an empty list for an unknown player)."""
    return json_response({"items": ledger.recent_changes(players, n, version)})
