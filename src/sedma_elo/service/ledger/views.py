"""The JSON answer for one match (its sequence, version and explained changes), as data and as text.

Two forms: the full answer (:func:`match_view`, the default), and its summary (:func:`summary_view`,
what ``Prefer: return=minimal`` asks for): the same keys without the match and with four keys per
change. The summary is a projection of the full answer, never facts of its own.
"""

from __future__ import annotations

import json
from typing import Any

from ...core._jsontext import json_scalar, json_string
from ...core.engine import RatingResult
from ...core.explain import change_to_dict, change_to_json
from ..payload import Submission
from .types import VersionInfo

__all__ = [
    "SUMMARY_CHANGE_KEYS",
    "match_view",
    "response_text",
    "summary_of",
    "summary_text",
    "summary_view",
    "view_text",
]

#: What the summary keeps of each change (the full answer's keys, in its order).
SUMMARY_CHANGE_KEYS = ("player_id", "rating_before", "rating_after", "delta")


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
    return _answer_text(sub, seq, version, f'"match":{sub.body},', changes)


def _answer_text(sub: Submission, seq: int, version: VersionInfo, match: str, changes: str) -> str:
    """A just-applied match's answer around its parts, in :func:`match_view`'s key order: ``match``
    the ``"match":...,`` member (empty in the summary), ``changes`` the changes' texts joined."""
    return (
        f'{{"match_id":{json_string(sub.match_id)},"sequence":{json_scalar(seq)},'
        f'"played_at":{json_scalar(sub.played_at)},"voided":false,"void_reason":null,{match}'
        f'"ratings_version":{{"id":{json_scalar(version.id)},'
        f'"label":{json_string(version.label)},"rules":{json_string(version.rules.label)}}},'
        f'"changes":[{changes}]}}'
    )


def summary_view(view: dict[str, Any]) -> dict[str, Any]:
    """The summary of a :func:`match_view`: every key but ``match``, each change cut to
    :data:`SUMMARY_CHANGE_KEYS`."""
    out = {key: value for key, value in view.items() if key not in ("match", "changes")}
    out["changes"] = [{key: change[key] for key in SUMMARY_CHANGE_KEYS} for change in view["changes"]]
    return out


def summary_of(text: str) -> str:
    """The summary's text of a full answer's text (:func:`view_text` of :func:`summary_view`)."""
    return view_text(summary_view(json.loads(text)))


def summary_text(sub: Submission, seq: int, version: VersionInfo, result: RatingResult) -> str:
    """:func:`summary_of` the :func:`response_text` of a just-applied match, built directly (byte
    for byte the same: tests/service/test_summary_answers.py); a fraction of the full text's cost."""
    changes = ",".join(
        f'{{"player_id":{json_string(c.player_id)},"rating_before":{json_scalar(c.rating_before)},'
        f'"rating_after":{json_scalar(c.rating_after)},"delta":{json_scalar(c.delta)}}}'
        for c in result.changes
    )
    return _answer_text(sub, seq, version, "", changes)
