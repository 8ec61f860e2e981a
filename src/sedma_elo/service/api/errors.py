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
from starlette.exceptions import HTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
from ..faults import storage_fault

__all__ = [
    "StorageFaults",
    "error_body",
    "error_response",
    "install_error_handlers",
    "request_validation_response",
    "server_error_response",
]

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


def server_error_response(request_id: str) -> JSONResponse:
    """The 500 answer to an unexpected error: no detail of it, but the request id to report it by.

    The id is the one logged with the error's traceback (and sent as ``X-Request-ID``).
    """
    return JSONResponse({"detail": "internal server error", "request_id": request_id}, status_code=500)


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

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed_methods(app, request))
        return error_body(exc.status_code, exc.detail, headers or None)

    @app.exception_handler(Exception)
    async def _bug(_: Request, exc: Exception) -> JSONResponse:
        # Starlette still logs the traceback and re-raises; the client gets JSON, not bare text.
        return error_body(500, "internal server error")


#: The methods a 405's ``Allow`` may name (the API serves no others).
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _allowed_methods(app: FastAPI, request: Request) -> list[str]:
    """Every method some route of ``app`` serves on the request's path (Starlette names only the first's)."""
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in app.router.routes
        )
    ]


class StorageFaults:
    """Answer a storage fault (full disk, lost database) raised anywhere in ``app`` with a 503.

    The driver's error becomes a :class:`~sedma_elo.errors.StorageUnavailableError` through
    :func:`~sedma_elo.service.faults.storage_fault` (which logs it once per kind per interval)
    and is answered by :func:`error_response`. Other errors pass through untouched, as do faults
    met after the response has started (nothing can be said then).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            fault = None if started else storage_fault(exc)
            if fault is None:
                raise
            await error_response(fault)(scope, receive, send)
