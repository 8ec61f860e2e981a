"""The change feed: ``GET /v1/changes`` as JSON pages, or streamed as NDJSON through the end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import Response, StreamingResponse

from ...ledger.feed import FEED_PAGE
from ..deps import LedgerDep
from ..feed_schemas import ChangesOut
from ..responses import errors

__all__ = ["NDJSON", "router"]

NDJSON = "application/x-ndjson"

router = APIRouter(tags=["changes"])


def _lines(items: Iterator[str]) -> Iterator[str]:
    for item in items:
        yield item + "\n"


@router.get(
    "/v1/changes",
    response_model=ChangesOut,
    responses={
        200: {
            "description": f"a page (JSON), or with `Accept: {NDJSON}` one item per line through the end",
            "content": {NDJSON: {"schema": {"type": "string"}}},
        },
        **errors(422, notes={422: "a bad `after` or `limit` (over 500 for a page)"}),
    },
)
def get_changes(
    ledger: LedgerDep,
    after: Annotated[int, Query(ge=0, le=2**63 - 1, description="items with a greater sequence")] = 0,
    limit: Annotated[
        int | None,
        Query(ge=1, description=f"items per page (1..500, default {FEED_PAGE}); NDJSON: at most this many"),
    ] = None,
    accept: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> Response:
    """Applied matches, voids and switches of the active version, in sequence order, after ``after``.

    Follow with ``after=poll_after``: sequences are dense and in commit order, so nothing is
    skipped. ``Accept: application/x-ndjson`` streams every item through the end of the feed, one
    JSON object per line, then closes.
    """
    if accept is not None and NDJSON in accept.lower():
        items = ledger.stream_changes(after, limit)  # checks its arguments before the answer starts
        return StreamingResponse(_lines(items), media_type=NDJSON)
    page = ledger.changes(after, FEED_PAGE if limit is None else limit)
    return Response(page.to_text(), media_type="application/json")
