"""The leaderboard: keyset pages by rating, and one player's neighbourhood."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ...ledger import MAX_PAGE
from ...ledger import LeaderboardPage as LedgerPage
from ..deps import LedgerDep, PlayerId, VersionQuery
from ..responses import LeaderboardPage, errors
from ..schemas import json_response

__all__ = ["router"]

router = APIRouter(tags=["leaderboard"])


def _page(page: LedgerPage) -> Response:
    return json_response(
        {"items": page.items, "next_cursor": page.next_cursor, "ratings_version": page.version_id}
    )


@router.get("/v1/leaderboard", response_model=LeaderboardPage, responses=errors(422))
async def get_leaderboard(
    ledger: LedgerDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(max_length=400)] = None,
    version: VersionQuery = None,
) -> Response:
    """Highest rating first, ties by player id; keyset pages through ``next_cursor``."""
    return _page(await ledger.leaderboard_async(limit, cursor, version))


@router.get(
    "/v1/leaderboard/around/{player_id}",
    response_model=LeaderboardPage,
    responses=errors(404, 422, notes={404: "unknown player"}),
)
async def get_around(
    player_id: PlayerId, ledger: LedgerDep, span: Annotated[int, Query(ge=0, le=100)] = 5
) -> Response:
    """The player's rank with ``span`` players above and below."""
    # One statement awaited on the async reader (no thread of the pool).
    return _page(await ledger.around_async(player_id, span))
