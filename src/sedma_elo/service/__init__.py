"""The rating service: a match ledger over HTTP on SQLite or PostgreSQL.

``Ledger`` (the package ``ledger``) holds the logic (apply, void, re-rate, verify, reads), ``auth``
the API keys and their checks, ``api`` the routers that ``create_app`` assembles into the FastAPI
application, ``ServiceSettings`` its settings and ``runtime`` the tuning of a serving process.
"""

from .app import create_app
from .auth import KeyInfo, create_key, list_keys, revoke_key
from .ledger import ApplyOutcome, Ledger, VerifyReport, VersionInfo, replay
from .payload import MatchIn, Submission, submission_from_match, submission_from_payload
from .settings import ServiceSettings
from .writer import GroupWriter

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
