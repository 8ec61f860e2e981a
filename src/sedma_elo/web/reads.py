"""Everything the pages read, in one place: the service layer's typed read interface.

The pages read through the ``Ledger`` the app factory opened, as
:class:`~sedma_elo.service.reads.PageReads` (:func:`service`, the one accessor of
``request.app.state``). A player page needs every match of a career (sides, winner, the other
players' ratings before it) for the record, streaks and head-to-head: :func:`career_matches` asks
the ledger for them in batches (``matches_at``) instead of explaining each match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request

from ..core.provisional import PROVISIONAL_MATCHES

if TYPE_CHECKING:  # the service includes the web router: importing it at run time would be circular
    from ..service.reads import GameReads, PageReads

__all__ = [
    "CareerMatch",
    "analysed_game",
    "as_mapping",
    "career_matches",
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


@dataclass(frozen=True, slots=True)
class CareerMatch:
    """One match of a career seen from one player: sides, winner and everyone's rating before it."""

    sequence: int
    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    winner: str  # "a", "b" or "draw"
    before: Mapping[str, int]  # rating before the match by player id

    def side_of(self, player_id: str) -> str:
        """``"a"`` or ``"b"``."""
        return "a" if player_id in self.team_a else "b"

    def opponents(self, player_id: str) -> tuple[str, ...]:
        """The other side's players."""
        return self.team_b if self.side_of(player_id) == "a" else self.team_a

    def result(self, player_id: str) -> str:
        """``"win"``, ``"draw"`` or ``"loss"`` for ``player_id``."""
        if self.winner == "draw":
            return "draw"
        return "win" if self.winner == self.side_of(player_id) else "loss"

    def opponent_rating(self, player_id: str) -> float | None:
        """The mean rating of the other side before the match (``None`` if unknown)."""
        ratings = [self.before[p] for p in self.opponents(player_id) if p in self.before]
        return sum(ratings) / len(ratings) if ratings else None


def sides_of(body: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Side a and side b of a match in its JSON form (one against one, or two against two)."""
    if body.get("player_a") is not None:
        return (body["player_a"],), (body["player_b"],)
    return tuple(body.get("team_a") or ()), tuple(body.get("team_b") or ())


def career_matches(request: Request, sequences: Sequence[int]) -> dict[int, CareerMatch]:
    """The matches with these ledger sequences, by sequence (active version's ratings before them)."""
    found: dict[int, CareerMatch] = {}
    for seq, (body, before) in service(request).matches_at(sequences).items():
        team_a, team_b = sides_of(body)
        found[seq] = CareerMatch(seq, team_a, team_b, str(body.get("winner")), before)
    return found
