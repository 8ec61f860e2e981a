"""The JSON answer for one match (its sequence, version and explained changes), as data and as text."""

from __future__ import annotations

import json
from typing import Any

from ...core._jsontext import json_scalar, json_string
from ...core.engine import RatingResult
from ...core.explain import change_to_dict, change_to_json
from ..payload import Submission
from .types import VersionInfo

__all__ = ["match_view", "response_text", "view_text"]


def match_view(
    body: dict[str, Any],
    sequence: int,
    played_at: str | None,
    version: VersionInfo,
    result: RatingResult | None,
    voided: bool,
    void_reason: str | None,
) -> dict[str, Any]:
    """The JSON answer for one match: the match, its sequence, the version and the explanation."""
    return {
        "match_id": body["match_id"],
        "sequence": sequence,
        "played_at": played_at,
        "voided": voided,
        "void_reason": void_reason,
        "match": body,
        "ratings_version": {"id": version.id, "label": version.label, "rules": version.rules.label},
        "changes": [] if result is None else [change_to_dict(result, c.player_id) for c in result.changes],
    }


def view_text(view: dict[str, Any]) -> str:
    """The JSON text of a :func:`match_view` (the form :func:`response_text` writes)."""
    return json.dumps(view, separators=(",", ":"), ensure_ascii=False)


def response_text(sub: Submission, seq: int, version: VersionInfo, result: RatingResult) -> str:
    """The JSON text of :func:`match_view` for a just-applied match, reusing the canonical body text.

    Byte for byte ``json.dumps`` of the view with ``separators=(",", ":")`` and
    ``ensure_ascii=False``, formatted directly: this runs on every match write.
    """
    changes = ",".join(change_to_json(result, c.player_id) for c in result.changes)
    return (
        f'{{"match_id":{json_string(sub.match_id)},"sequence":{json_scalar(seq)},'
        f'"played_at":{json_scalar(sub.played_at)},"voided":false,"void_reason":null,'
        f'"match":{sub.body},"ratings_version":{{"id":{json_scalar(version.id)},'
        f'"label":{json_string(version.label)},"rules":{json_string(version.rules.label)}}},'
        f'"changes":[{changes}]}}'
    )
