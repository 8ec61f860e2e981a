"""The typed read interface of the HTML pages: what they may ask the service layer.

:class:`~sedma_elo.service.ledger.Ledger` provides it (the app factory stores it on
``app.state.reads``, checked against this protocol by mypy); a page never reaches the writer, the
database or the admin operations. One read stores something: a long career's summary
(:meth:`career_summary`) keeps its fold in ``career_states`` as a cache, skipped when the database
is busy, never waited for (``service/ledger/career_state.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .games.store import GameRow
from .ledger.career import CareerSummary, SeriesPoint
from .ledger.career_item import CareerItem
from .ledger.types import HistoryOrder, HistoryPage, LeaderboardPage, PlayerRecord, VersionInfo

__all__ = ["GameReads", "PageReads"]


class GameReads(Protocol):
    """The read behind the game shown on a match page (:class:`~sedma_elo.service.games.GameStore`)."""

    def find(self, match_id: str) -> GameRow | None:
        """The posted game of this id (record, status, analysis), or ``None``."""
        ...


class PageReads(Protocol):
    """The reads behind the leaderboard, player and match pages (see :class:`Ledger` for contracts)."""

    def active_version(self) -> VersionInfo:
        """The version reads come from."""
        ...

    def get_player(self, player_id: str, version_id: int | None = None) -> PlayerRecord:
        """A player's standing; raises NotFoundError for an unknown player."""
        ...

    def search_players(self, prefix: str, limit: int = 20) -> list[dict[str, Any]]:
        """Players whose id starts with ``prefix``."""
        ...

    def player_history(
        self, player_id: str, limit: int = 50, cursor: str | None = None, order: HistoryOrder = "asc"
    ) -> HistoryPage:
        """One page of a player's rating history."""
        ...

    def player_career(self, player_id: str) -> list[CareerItem]:
        """Every match of a player's career oldest first, with sides and ratings before (one query)."""
        ...

    def career_page(
        self, player_id: str, limit: int = 25, *, before: int | None = None, after: int | None = None
    ) -> tuple[list[CareerItem], bool, int]:
        """One keyset page of a player's matches newest first, whether older exist, how many newer."""
        ...

    def career_summary(self, player_id: str, head_to_head: int = 8) -> CareerSummary:
        """A career's record, streaks, peak, best win and head-to-head (bounded rows read)."""
        ...

    def career_series(self, player_id: str, points: int = 400, days: int | None = None) -> list[SeriesPoint]:
        """A player's rating line thinned to at most ``points`` rows (optionally the last ``days`` days)."""
        ...

    def recent_changes(
        self, player_ids: Sequence[str], n: int = 10, version_id: int | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Each player's last ``n`` changes, newest first."""
        ...

    def leaderboard(
        self, limit: int = 50, cursor: str | None = None, version_id: int | None = None
    ) -> LeaderboardPage:
        """One page of the leaderboard."""
        ...

    def around(self, player_id: str, span: int = 5) -> LeaderboardPage:
        """A player's rank with neighbours."""
        ...

    def get_match(self, match_id: str) -> dict[str, Any]:
        """One match as stored, explained."""
        ...

    def active_id(self) -> int:
        """The id of the version reads come from."""
        ...
