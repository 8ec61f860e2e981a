"""The ``Prefer`` request header (RFC 7240) of ``POST /v1/matches``: ``return=minimal``.

A client that has no use for the explained answer (a game server that only stores the new
ratings) sends ``Prefer: return=minimal`` and gets the summary
(:func:`~sedma_elo.service.ledger.views.summary_view`) with ``Preference-Applied: return=minimal``.
Without it, or with ``return=representation``, the answer is the full one. Other preferences
are ignored, as RFC 7240 asks of a preference a server does not support.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["APPLIED", "PREFER_DOC", "wants_minimal"]

#: The answer's header when the summary was sent.
APPLIED = (b"preference-applied", b"return=minimal")

PREFER_DOC = (
    "`return=minimal`: answer with the match's summary (sequence, version, each player's rating"
    " before and after) instead of the full explained answer, and say so in `Preference-Applied`."
    " The match is stored the same way; `GET /v1/matches/{match_id}` gives the full answer later."
)


def wants_minimal(values: Iterable[str]) -> bool:
    """Whether the ``Prefer`` header values (each a comma-separated list) ask ``return=minimal``.

    Names and the value are matched without regard to case, a value may be quoted, and a
    preference's parameters (after ``;``) are ignored. When ``return`` is given more than once the
    first one counts (RFC 7240, section 2).
    """
    for value in values:
        for preference in value.split(","):
            name, _, rest = preference.split(";", 1)[0].partition("=")
            if name.strip().lower() == "return":
                return rest.strip().strip('"').lower() == "minimal"
    return False
