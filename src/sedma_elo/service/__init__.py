"""The rating service: a match ledger over HTTP on SQLite or PostgreSQL.

``Ledger`` (the package ``ledger``) holds the logic (apply, void, re-rate, verify, reads), ``auth``
the API keys and their checks, ``api`` the routers that ``create_app`` assembles into the FastAPI
application, ``ServiceSettings`` its settings and ``runtime`` the process-wide tuning that ``serve``
no longer does (kept for the benchmark that measures it).

The names below are imported on first use (PEP 562): a command that needs only the ledger
(``sedma-elo verify``, ``import``, ``ratings rerate``) must not load FastAPI, pydantic, Jinja and the
web pages, about 40 MB of a process that ``verify`` keeps under 256 MB.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import create_app
    from .auth import KeyInfo, create_key, list_keys, revoke_key
    from .ledger import ApplyOutcome, Ledger, VerifyReport, VersionInfo, replay
    from .payload import MatchIn, Submission, submission_from_match, submission_from_payload
    from .settings import ServiceSettings
    from .writer import GroupWriter

#: Each public name and the submodule that defines it.
_WHERE = {
    "create_app": ".app",
    **dict.fromkeys(("KeyInfo", "create_key", "list_keys", "revoke_key"), ".auth"),
    **dict.fromkeys(("ApplyOutcome", "Ledger", "VerifyReport", "VersionInfo", "replay"), ".ledger"),
    **dict.fromkeys(
        ("MatchIn", "Submission", "submission_from_match", "submission_from_payload"), ".payload"
    ),
    "ServiceSettings": ".settings",
    "GroupWriter": ".writer",
}

__all__ = [
    "ApplyOutcome",
    "GroupWriter",
    "KeyInfo",
    "Ledger",
    "MatchIn",
    "ServiceSettings",
    "Submission",
    "VerifyReport",
    "VersionInfo",
    "create_app",
    "create_key",
    "list_keys",
    "replay",
    "revoke_key",
    "submission_from_match",
    "submission_from_payload",
]


def __getattr__(name: str) -> object:
    """Import a public name's submodule on first use (a submodule name falls through to import)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(where, __name__), name)
    globals()[name] = value
    return value
