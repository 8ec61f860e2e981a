"""Everything the pages read, in one place: the service layer's typed read interface.

The pages read through the ``Ledger`` the app factory opened, as
:class:`~sedma_elo.service.reads.PageReads` (:func:`service`, the one accessor of
``request.app.state``). A player page asks the ledger for bounded parts of a career (one page of
matches, the summary, the thinned chart: ``career_page``, ``career_summary``, ``career_series``),
never for the whole career.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request

from ..core.provisional import PROVISIONAL_MATCHES

if TYPE_CHECKING:  # the service includes the web router: importing it at run time would be circular
    from ..service.reads import GameReads, PageReads

__all__ = [
    "analysed_game",
    "as_mapping",
    "pending_game",
    "provisional_matches",
    "service",
    "sides_of",
]


def service(request: Request) -> PageReads:
    """The service layer's typed read interface (the ``Ledger`` the app factory opened)."""
    reads: PageReads = request.app.state.reads
    return reads


def analysed_game(request: Request, match_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The record and analysis of the game posted for this match, or ``None`` (none, or not analysed)."""
    games: GameReads | None = getattr(request.app.state, "games", None)
    if games is None:
        return None
    row = games.find(match_id)
    if row is None or row.analysis is None:
        return None
    return row.record, row.analysis


def pending_game(request: Request, match_id: str) -> str | None:
    """The status (``queued``, ``analysing``) of the game posted for this match while it waits, else None."""
    games: GameReads | None = getattr(request.app.state, "games", None)
    if games is None:
        return None
    row = games.find(match_id)
    if row is None or row.status not in ("queued", "analysing"):
        return None
    return row.status


def provisional_matches(request: Request) -> int:
    """The service's number of matches below which a rating is provisional (settings, default 10)."""
    found = getattr(request.app.state, "provisional_matches", PROVISIONAL_MATCHES)
    return int(found)


def as_mapping(obj: Any) -> dict[str, Any]:
    """A service answer as a plain mapping (dicts, dataclasses and pydantic models alike)."""
    if isinstance(obj, Mapping):
        return dict(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in fields(obj)}
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dict(dump(mode="json"))
    raise TypeError(f"cannot read a {type(obj).__name__} as a mapping")


def sides_of(body: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Side a and side b of a match in its JSON form (one against one, or two against two)."""
    if body.get("player_a") is not None:
        return (body["player_a"],), (body["player_b"],)
    return tuple(body.get("team_a") or ()), tuple(body.get("team_b") or ())
