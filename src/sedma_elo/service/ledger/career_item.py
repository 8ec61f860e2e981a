"""One match of a player's career as the player pages read it (:class:`CareerItem`)."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

__all__ = ["CareerItem"]


class CareerItem(NamedTuple):
    """One match of a player's career in a version, seen from that player.

    The history item's fields (``sequence``, ``match_id``, ``played_at`` as an aware UTC datetime
    or ``None``, the player's ``rating_before`` and ``rating_after``), the winner, the four player
    slots (``a2``/``b2`` are ``None`` one against one) and each slot's rating before the match. One
    flat tuple a match: a page of a 10,000-match career builds 10,000 of them, and every container
    more per match cost the page a garbage collection of the whole process.
    """

    sequence: int
    match_id: str
    played_at: datetime | None
    rating_before: int
    rating_after: int
    winner: str  # "a", "b" or "draw"
    a1: str
    a2: str | None
    b1: str
    b2: str | None
    before_a1: int
    before_a2: int | None
    before_b1: int
    before_b2: int | None

    @property
    def team_a(self) -> tuple[str, ...]:
        """Side a's players."""
        return (self.a1,) if self.a2 is None else (self.a1, self.a2)

    @property
    def team_b(self) -> tuple[str, ...]:
        """Side b's players."""
        return (self.b1,) if self.b2 is None else (self.b1, self.b2)

    def side_of(self, player_id: str) -> str:
        """``"a"`` or ``"b"``."""
        return "a" if player_id == self.a1 or player_id == self.a2 else "b"

    def opponents(self, player_id: str) -> tuple[str, ...]:
        """The other side's players."""
        return self.team_b if self.side_of(player_id) == "a" else self.team_a

    def result(self, player_id: str) -> str:
        """``"win"``, ``"draw"`` or ``"loss"`` for ``player_id``."""
        if self.winner == "draw":
            return "draw"
        return "win" if self.winner == self.side_of(player_id) else "loss"

    def opponent_rating(self, player_id: str) -> float:
        """The mean rating of the other side before the match."""
        if self.side_of(player_id) == "a":
            return self.before_b1 if self.before_b2 is None else (self.before_b1 + self.before_b2) / 2
        return self.before_a1 if self.before_a2 is None else (self.before_a1 + self.before_a2) / 2
