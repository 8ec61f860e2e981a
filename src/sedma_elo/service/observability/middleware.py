"""The ASGI wrapper that gives every request its id, its metrics and its access-log line.

It wraps both FastAPI's stack and the direct ``POST /v1/matches`` route (which bypasses that
stack; see :mod:`sedma_elo.service.api.asgi`), so the hot write path is observed like every other.
It is also where an unexpected error ends: logged with its traceback and the request id, and
answered with a JSON 500 that carries the same id
(:func:`sedma_elo.service.api.errors.server_error_response`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..api.errors import server_error_response
from .logging import ACCESS_LOGGER, LOGGER
from .metrics import REQUEST_SECONDS, REQUESTS
from .request_id import HEADER, pick_request_id, request_id_var

__all__ = ["Observe"]

_access = logging.getLogger(ACCESS_LOGGER)
_log = logging.getLogger(LOGGER)

#: The route label of a request no route matched (a label per unknown path would grow forever).
UNMATCHED = "<unmatched>"


def _route_template(scope: Scope, fixed: str | None) -> str:
    if fixed is not None:
        return fixed
    route: Any = scope.get("route")
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    return str(path) if path else UNMATCHED


class Observe:
    """Serve ``app`` with a request id, and count, time and (optionally) log each HTTP request.

    ``route`` fixes the route label (for an app that serves one route); otherwise the label is
    the template of the FastAPI route that matched (``/v1/players/{player_id}``). An exception
    that escapes ``app`` before the answer started is logged and answered with a JSON 500 (after
    it started, it is raised on: the connection is all that is left to close).
    """

    def __init__(
        self, app: ASGIApp, *, metrics: bool = True, access_log: bool = False, route: str | None = None
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.access_log = access_log
        self.route = route
        # The metric children of each (method, route, status): labels() takes a lock and builds
        # its key on every call (a few µs per request on the write path). Bounded: route templates.
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        rid = pick_request_id(scope["headers"])
        token = request_id_var.set(rid)
        status = 500
        started = False
        header = (HEADER, rid.encode("ascii"))

        async def send_with_id(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                status = message["status"]
                started = True
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            if started:
                raise
            _log.exception("unexpected error serving %s %s", scope["method"], scope["path"])
            await server_error_response(rid)(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - start
            method = scope["method"]
            if self.metrics:
                route = _route_template(scope, self.route)
                children = self._children.get((method, route, status))
                if children is None:
                    code = str(status)
                    children = (
                        REQUESTS.labels(method, route, code),
                        REQUEST_SECONDS.labels(method, route, code),
                    )
                    self._children[(method, route, status)] = children
                children[0].inc()
                children[1].observe(elapsed)
            if self.access_log:
                _access.info(
                    "%s %s %d %.1f ms",
                    method,
                    scope["path"],
                    status,
                    elapsed * 1000,
                    extra={
                        "method": method,
                        "path": scope["path"],
                        "status": status,
                        "duration_ms": round(elapsed * 1000, 3),
                        "client": (scope.get("client") or ("", 0))[0],
                        "request_id": rid,
                    },
                )
            request_id_var.reset(token)
