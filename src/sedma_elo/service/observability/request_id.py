"""Request ids: taken from a sane ``X-Request-ID`` header or made up, kept in a context variable.

The id is returned in the ``X-Request-ID`` response header and stamped on every log record written
while the request is served (:class:`~sedma_elo.service.observability.logging.RequestIdFilter`).
"""

from __future__ import annotations

import random
import re
from contextvars import ContextVar

__all__ = ["HEADER", "current_request_id", "pick_request_id", "request_id_var"]

#: The request and response header (lower case, as ASGI spells header names).
HEADER = b"x-request-id"

#: An incoming id is kept only when it is short and plain: no spaces, quotes or control characters
#: that could forge log lines or headers.
_SANE = re.compile(rb"[A-Za-z0-9._:\-]{1,128}")

request_id_var: ContextVar[str | None] = ContextVar("sedma_elo_request_id", default=None)


def pick_request_id(headers: list[tuple[bytes, bytes]]) -> str:
    """The request's own ``X-Request-ID`` when it is sane, else a new random 16-hex-digit id (not secret)."""
    for name, value in headers:
        if name == HEADER:
            if _SANE.fullmatch(value):
                return value.decode("ascii")
            break
    # An id correlates log lines, it guards nothing: the process's own generator (reseeded in a
    # forked child) instead of the system's (secrets.token_hex: a system call, about 4% of a
    # write's event-loop CPU on a loaded machine).
    return f"{random.getrandbits(64):016x}"


def current_request_id() -> str | None:
    """The id of the request being served in this context (``None`` outside a request)."""
    return request_id_var.get()
