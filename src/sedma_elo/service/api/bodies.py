"""The checks every JSON request body passes before it is parsed into a model.

* The content type must be JSON (``application/json`` or ``...+json``; none at all is taken as
  JSON, as clients like ``curl -d`` send a form type only when told to): otherwise 415.
* The body must be UTF-8: otherwise 422.
* No object may repeat a key (JSON leaves it open; "the last one wins" would let two readings of
  one body disagree): otherwise 422 naming the key.

:class:`CheckedJsonRoute` applies them to FastAPI routes; the direct write route calls
:func:`body_refusal` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from fastapi.routing import APIRoute

from .errors import error_body

__all__ = ["CheckedJsonRoute", "body_refusal"]


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # in C; only a body with a repeated key pays the loop that names it
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


#: One decoder for every body: ``json.loads`` with a hook builds a new ``JSONDecoder`` per call.
_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates)


def _is_json_type(content_type: str | None) -> bool:
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def body_refusal(content_type: str | None, raw: bytes) -> Response | None:
    """The answer refusing a body (415 wrong content type, 422 repeated key), or ``None`` if it passes.

    Malformed JSON passes here: the model's own parsing reports it with its position.
    """
    if not _is_json_type(content_type):
        return error_body(
            415, f"the body must be JSON (Content-Type: application/json), not {content_type!r}"
        )
    try:
        text = raw.decode("utf-8")  # JSON between systems is UTF-8 (RFC 8259); FastAPI said 400 here
    except UnicodeDecodeError as exc:
        detail = [{"loc": ["body"], "msg": f"not UTF-8 at byte {exc.start}", "type": "json_invalid"}]
        return error_body(422, detail)
    try:
        _DECODER.decode(text)
    except _DuplicateKey as dup:
        detail = [{"loc": ["body", dup.key], "msg": "this key appears more than once", "type": "value_error"}]
        return error_body(422, detail)
    except ValueError:  # not JSON: left to the model's parser
        pass
    return None


class CheckedJsonRoute(APIRoute):
    """An APIRoute whose JSON body passes :func:`body_refusal` before FastAPI parses it.

    The body is read here first, so a body over the limit reaches the body-limit middleware as a
    413 (FastAPI's own reading would turn it into a 400 "error parsing the body").
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def checked(request: Request) -> Response:
            refusal = body_refusal(request.headers.get("content-type"), await request.body())
            if refusal is not None:
                return refusal
            return await handler(request)

        return checked
