"""The documented request bodies of the admin routes, and the JSON answer helper of every route."""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ..auth.keys import Scope

__all__ = [
    "NO_CONTROL_CHARS",
    "RULES_BODY_BYTES",
    "RULES_TOML_CHARS",
    "KeyIn",
    "RulesIn",
    "VoidIn",
    "json_response",
]

#: Free text stored as given: PostgreSQL text cannot hold NUL, and no label needs a control character.
NO_CONTROL_CHARS = r"^[^\x00-\x1f\x7f]*$"


#: Longest rules text ``POST /v1/admin/rules`` takes, and the body limit of that route: room for
#: that many characters sent as 6-byte ``\uXXXX`` escapes, plus the other fields.
RULES_TOML_CHARS = 20_000
RULES_BODY_BYTES = 6 * RULES_TOML_CHARS + 1024


class VoidIn(BaseModel):
    """Why a match is voided."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field("", max_length=500, pattern=NO_CONTROL_CHARS)


class RulesIn(BaseModel):
    """New rules (the TOML text of a rules file) to re-rate the whole ledger with."""

    model_config = ConfigDict(extra="forbid")
    rules_toml: str = Field(max_length=RULES_TOML_CHARS)
    label: str | None = Field(None, min_length=1, max_length=200, pattern=NO_CONTROL_CHARS)
    activate: bool = Field(True, strict=True)  # 0/1 or "true" are refused, not read as booleans


class KeyIn(BaseModel):
    """A new API key's scope and a label to recognise it by."""

    model_config = ConfigDict(extra="forbid")
    scope: Scope
    label: str = Field("", max_length=200, pattern=NO_CONTROL_CHARS)


def json_response(data: Any, status: int = 200) -> Response:
    """``data`` as compact JSON with ``status``."""
    return Response(
        json.dumps(data, separators=(",", ":")), status_code=status, media_type="application/json"
    )
