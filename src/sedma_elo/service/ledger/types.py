"""What the ledger answers: versions, write outcomes, players, pages and reports (plain data)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ...core.rules import Rules
from ...errors import SedmaEloError

__all__ = [
    "MAX_PAGE",
    "MAX_RECENT",
    "ApplyOutcome",
    "HeldRefusal",
    "HistoryOrder",
    "HistoryPage",
    "ImportReport",
    "LeaderboardPage",
    "PlayerRecord",
    "VerifyReport",
    "VersionInfo",
    "now_text",
]

#: Most rows one page of the leaderboard or of a player's history holds.
MAX_PAGE = 500
#: Most players, and most changes per player, that :meth:`Ledger.recent_changes` answers at once.
MAX_RECENT = 100
#: The refusal of a match whose id a game record waiting for its analysis holds (see
#: :meth:`WriterSession.apply`'s ``held``).
HeldRefusal = Callable[[str], SedmaEloError]
#: The order of a player's history: oldest first or newest first.
HistoryOrder = Literal["asc", "desc"]


def now_text() -> str:
    """The current UTC time as ISO 8601 text."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """A ratings version: the rules its ratings were computed with."""

    id: int
    label: str
    rules: Rules
    active: bool
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (without the rules text)."""
        return {
            "id": self.id,
            "label": self.label,
            "rules": self.rules.label,
            "active": self.active,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class ApplyOutcome:
    """What happened to one submitted match.

    ``status`` is ``created`` (applied now, answer 201), ``repeat`` (same body seen before, 200)
    or ``error`` (``error`` says why; nothing was stored for it). ``body`` is the JSON answer.
    """

    status: Literal["created", "repeat", "error"]
    body: str = ""
    error: SedmaEloError | None = None
    failure: Exception | None = None  # an unexpected error (a server error, not the client's)


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """A player's current standing in a ratings version."""

    player_id: str
    rating: int
    matches_played: int
    last_sequence: int
    version_id: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "player_id": self.player_id,
            "rating": self.rating,
            "matches_played": self.matches_played,
            "last_sequence": self.last_sequence,
            "ratings_version": self.version_id,
        }


@dataclass(frozen=True, slots=True)
class LeaderboardPage:
    """One page of the leaderboard; ``next_cursor`` is ``None`` on the last page."""

    items: list[dict[str, Any]]
    next_cursor: str | None
    version_id: int


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of a player's rating history (oldest or newest first, as asked)."""

    player_id: str
    items: list[dict[str, Any]]
    next_cursor: str | None


@dataclass
class ImportReport:
    """What an import did: matches applied, repeats recognised, and refusals with their reasons."""

    created: int = 0
    repeated: int = 0
    refused: list[str] = field(default_factory=list)


@dataclass
class VerifyReport:
    """The result of :func:`Ledger.verify`: empty ``mismatches`` means every version agrees, empty
    ``index_faults`` that every index and key is there, usable and as declared
    (:func:`~sedma_elo.storage.index_faults`)."""

    versions: int = 0
    matches: int = 0
    players: int = 0
    mismatches: list[str] = field(default_factory=list)
    index_faults: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the stored ratings equal a pure replay of the ledger and no index is at fault."""
        return not self.mismatches and not self.index_faults
