"""``POST /v1/matches`` (apply a match exactly once) and ``GET /v1/matches/{match_id}``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import ValidationError as PydanticValidationError

from ....errors import SedmaEloError
from ....i18n import localized_changes, negotiate
from ...auth import KeyGuard, bearer_secret
from ...faults import storage_fault
from ...payload import MatchIn, submission_from_payload
from ...writer import Submitter
from ..asgi import JsonText
from ..bodies import CheckedJsonRoute, body_refusal
from ..deps import LedgerDep, MatchId, WriteKey, WriterDep
from ..errors import error_response, request_validation_response
from ..prefer import APPLIED, PREFER_DOC, wants_minimal
from ..responses import AUTH_ERRORS, BODY_ERRORS, MatchSummary, MatchView, errors
from ..schemas import json_response

__all__ = ["apply_payload", "router", "write_match"]

router = APIRouter(tags=["matches"], route_class=CheckedJsonRoute)


async def apply_payload(writer: Submitter, payload: MatchIn, *, minimal: bool = False) -> Response:
    """Queue a validated match for the group writer and answer with its outcome (201 new, 200 repeat):
    the full answer, or with ``minimal`` its summary (``Prefer: return=minimal``).

    Raises:
        SedmaEloError: the match is refused (a conflict, a rating the engine refuses...).
    """
    sub = submission_from_payload(payload)
    sub.minimal = minimal
    outcome = await writer.submit(sub)
    if outcome.error is not None:
        raise outcome.error
    if outcome.failure is not None:
        raise outcome.failure
    answer = JsonText(outcome.body, 201 if outcome.status == "created" else 200)
    if minimal:
        answer.raw_headers.append(APPLIED)
    return answer


@router.post(
    "/v1/matches",
    status_code=201,
    response_model=MatchView | MatchSummary,
    responses={
        200: {
            "model": MatchView | MatchSummary,
            "description": "the same match_id with the same body again: the first answer, unchanged"
            " (the summary of it with `Prefer: return=minimal`)",
        },
        **errors(
            *AUTH_ERRORS,
            *BODY_ERRORS,
            409,
            503,
            notes={
                403: "a key without the write scope",
                409: "the match_id was used for a different match",
                503: "write queue full or the write took too long (`Retry-After`); repeat it",
            },
        ),
    },
)
async def post_match(
    payload: MatchIn,
    _key: WriteKey,
    writer: WriterDep,
    request: Request,
    prefer: Annotated[str | None, Header(description=PREFER_DOC)] = None,
) -> Response:
    """Apply a finished match exactly once; answer with its sequence and explained changes (with
    `Prefer: return=minimal`, with its summary: each player's rating before and after)."""
    # ``prefer`` documents the header; every value is read, as a client may send several.
    return await apply_payload(writer, payload, minimal=wants_minimal(request.headers.getlist("prefer")))


def _auth_type_prefer(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str | None, str | None, list[str]]:
    """The first ``Authorization`` and ``Content-Type`` values of ASGI ``headers`` (names in lower case),
    as ``starlette.datastructures.Headers.get`` gives them, and every ``Prefer`` value, in one pass."""
    auth = ctype = None
    prefer = []
    for name, value in headers:
        if name == b"authorization":
            if auth is None:
                auth = value.decode("latin-1")
        elif name == b"content-type":
            if ctype is None:
                ctype = value.decode("latin-1")
        elif name == b"prefer":
            prefer.append(value.decode("latin-1"))
    return auth, ctype, prefer


async def write_match(
    guard: KeyGuard,
    writer: Submitter,
    headers: Iterable[tuple[bytes, bytes]],
    raw: bytes,
    address: str | None = None,
) -> Response:
    """:func:`post_match` on a raw request (the direct route; ``headers`` as ASGI's scope has them)
    from ``address``: key first, then the body.

    The answers equal :func:`post_match`'s (tests/service/test_direct_route.py), except that
    malformed JSON without a valid key gets 401 here, where FastAPI would parse first and answer 422.
    """
    try:
        authorization, content_type, prefer = _auth_type_prefer(headers)
        await guard.authorize_async(bearer_secret(authorization), "write", address)
        refusal = body_refusal(content_type, raw)
        if refusal is not None:
            return refusal
        try:
            payload = MatchIn.model_validate_json(raw)
        except PydanticValidationError as exc:
            raise RequestValidationError(
                [
                    {**e, "loc": ("body", *e["loc"])}
                    for e in exc.errors(include_url=False, include_context=False)
                ]
            ) from exc
        return await apply_payload(writer, payload, minimal=wants_minimal(prefer))
    except SedmaEloError as exc:
        return error_response(exc)
    except RequestValidationError as exc:
        return request_validation_response(exc)
    except Exception as exc:  # a full disk or a lost database met before the writer (the key check)
        fault = storage_fault(exc)
        if fault is None:
            raise
        return error_response(fault)


@router.get(
    "/v1/matches/{match_id}",
    response_model=MatchView,
    responses=errors(404, 422, notes={404: "unknown match"}),
)
def get_match(
    match_id: MatchId,
    ledger: LedgerDep,
    request: Request,
    lang: Annotated[str | None, Query(max_length=35, description="explanation language")] = None,
) -> Response:
    """The match, its sequence, the ratings version and the explanation of every change.

    The explanation sentences are in ``lang`` (en, de, it, es, sk, zh), else ``Accept-Language``.
    """
    view = ledger.get_match(match_id)
    chosen = negotiate(lang, accept_language=request.headers.get("accept-language"))
    return json_response({**view, "changes": localized_changes(view["changes"], chosen)})
