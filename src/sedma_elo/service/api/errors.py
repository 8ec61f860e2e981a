"""The one mapping from the project's errors to HTTP status codes and JSON error bodies.

Every route, the direct write route and the request validation of FastAPI answer through
:func:`error_response` / :func:`request_validation_response`; no other module picks a status code
for an error.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ...errors import (
    AuthError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SedmaEloError,
    UnavailableError,
    ValidationError,
)

__all__ = ["error_body", "error_response", "install_error_handlers", "request_validation_response"]

#: Fields that arrive in the query string (a ValidationError naming one is located in ``query``).
_QUERY_FIELDS = {"after", "limit", "cursor", "span", "version", "order", "n", "players", "prefix"}


def error_body(status: int, detail: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    """A JSON error answer: ``{"detail": ...}`` with ``status``."""
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def error_response(exc: SedmaEloError) -> JSONResponse:
    """The answer to a project error: 422 (naming the field), 409, 404, 403, 401, 429, 503 or 400."""
    if isinstance(exc, ValidationError):
        where = "query" if exc.field in _QUERY_FIELDS else "body"
        return error_body(
            422, [{"loc": [where, *exc.field.split(".")], "msg": exc.reason, "type": "value_error"}]
        )
    if isinstance(exc, ConflictError):
        return error_body(409, str(exc))
    if isinstance(exc, NotFoundError):
        return error_body(404, str(exc))
    if isinstance(exc, PermissionDeniedError):  # before AuthError: it is one
        return error_body(403, str(exc))
    if isinstance(exc, AuthError):
        return error_body(401, str(exc), {"WWW-Authenticate": "Bearer"})
    if isinstance(exc, RateLimitError):
        return error_body(429, str(exc), _retry_after(exc.retry_after))
    if isinstance(exc, UnavailableError):
        return error_body(503, str(exc), _retry_after(exc.retry_after))
    return error_body(400, str(exc))


def _retry_after(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, round(seconds + 0.5)))}


def request_validation_response(exc: RequestValidationError) -> JSONResponse:
    """The 422 answer to a request FastAPI could not validate (``detail[].loc`` names the field)."""
    errors = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors()
    ]
    return error_body(422, errors)


def install_error_handlers(app: FastAPI) -> None:
    """Route every project error and every request validation error of ``app`` to the mapping above."""

    @app.exception_handler(SedmaEloError)
    async def _project_error(_: Request, exc: SedmaEloError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return request_validation_response(exc)
