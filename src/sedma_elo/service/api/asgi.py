"""Plain ASGI pieces in front of the FastAPI application: the body-size limit and the direct route.

:class:`DirectRoute` serves the one hot endpoint (``POST /v1/matches``) before FastAPI's own
``__call__``, its middleware stack and router: under load those layers cost about a tenth of the
CPU of a match write. Its handler takes the same steps as the documented FastAPI route.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from fastapi.responses import Response
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit", "BodyTooLarge", "ClientGone", "DirectRoute", "JsonText", "read_body", "too_large"]

#: Called with the request's scope and whole body; answers with the response to send.
Handler = Callable[[Scope, bytes], Awaitable[Response]]


class BodyTooLarge(Exception):
    """The request body is larger than the limit."""


class ClientGone(Exception):
    """The client disconnected before it had sent the whole body."""


_JSON_TYPE = (b"content-type", b"application/json")


class JsonText(Response):
    """A JSON answer from its ready text: the headers ``Response(text, status, media_type=
    "application/json")`` sends, set directly (its header building cost about 2% of a write's
    event-loop CPU)."""

    media_type = "application/json"

    def __init__(self, text: str, status_code: int) -> None:  # no super().__init__: set here
        self.status_code = status_code
        self.background = None
        self.body = text.encode()
        self.raw_headers = [(b"content-length", str(len(self.body)).encode("latin-1")), _JSON_TYPE]


def too_large(limit: int) -> Response:
    """The 413 answer to a body larger than ``limit`` bytes."""
    body = json.dumps({"detail": f"request body larger than {limit} bytes"})
    return Response(body, status_code=413, media_type="application/json")


def declared_too_large(scope: Scope, limit: int) -> bool:
    """Whether the request's ``Content-Length`` is above ``limit`` (or not a number)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value) > limit
            except ValueError:
                return True
    return False


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body, read from ``receive``.

    Raises:
        BodyTooLarge: more than ``limit`` bytes arrived.
        ClientGone: the client disconnected first.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


class BodyLimit:
    """Answer 413 to a request whose body is larger than ``limit`` bytes (declared or streamed).

    ``larger`` gives some paths a higher limit of their own (a route whose documented body can be
    longer than the general limit).
    """

    def __init__(self, app: ASGIApp, limit: int, larger: dict[str, int] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.larger = {path: max(limit, n) for path, n in (larger or {}).items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope["path"], self.limit)
        if declared_too_large(scope, limit):
            await too_large(limit)(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except BodyTooLarge:
            await too_large(limit)(scope, receive, send)


class DirectRoute:
    """``method path`` served by ``handler``, for an application to call before its own stack.

    The body is limited to ``limit`` bytes (413 otherwise) as :class:`BodyLimit` would; a client
    that disconnects mid-body gets no answer.
    """

    def __init__(self, method: str, path: str, limit: int, handler: Handler) -> None:
        self.method = method
        self.path = path
        self.limit = limit
        self.handler = handler

    @classmethod
    def of(cls, route: APIRoute, limit: int, handler: Handler) -> DirectRoute:
        """The direct route in front of the FastAPI ``route`` (one method, a path without parameters).

        The method and path come from the route's declaration, so the two cannot drift apart.

        Raises:
            ValueError: ``route`` has several methods or a path parameter.
        """
        methods = route.methods or set()
        if len(methods) != 1 or route.param_convertors:
            raise ValueError(f"{route.path}: a direct route needs one method and a fixed path")
        (method,) = methods
        return cls(method, route.path, limit, handler)

    def matches(self, scope: Scope) -> bool:
        """Whether ``scope`` is a request for this route."""
        return bool(scope["type"] == "http" and scope["path"] == self.path and scope["method"] == self.method)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body, call the handler and send its response."""
        if declared_too_large(scope, self.limit):
            response = too_large(self.limit)
        else:
            try:
                body = await read_body(receive, self.limit)
            except BodyTooLarge:
                response = too_large(self.limit)
            except ClientGone:
                return
            else:
                response = await self.handler(scope, body)
        await response(scope, receive, send)
