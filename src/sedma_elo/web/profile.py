"""A player's career in numbers: record, peak, streaks, best win and head-to-head (pure functions).

The input is the player's career oldest first (:class:`~sedma_elo.web.reads.CareerMatch`: each
match's history item, sides, winner and everyone's rating before it), read in one statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..service.ledger.reads import CareerItem as CareerMatch

__all__ = ["Career", "HeadToHead", "career"]


@dataclass(slots=True)
class HeadToHead:
    """The player's results against one opponent."""

    opponent: str
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def played(self) -> int:
        """Matches against this opponent."""
        return self.wins + self.draws + self.losses


@dataclass(slots=True)
class Career:
    """The numbers of a player page. Peak and best win are ``None`` without matches (or wins)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    peak: CareerMatch | None = None  # the match of the highest rating (first reached)
    streak_result: str | None = None  # the result of the current run: "win", "draw" or "loss"
    streak: int = 0  # its length
    best_win_streak: int = 0
    best_win: Mapping[str, Any] | None = None  # {"item": CareerMatch, "opponents", "opponent_rating"}
    head_to_head: list[HeadToHead] = field(default_factory=list)


def career(player_id: str, matches: Sequence[CareerMatch], head_to_head: int = 8) -> Career:
    """The career of ``player_id`` from its matches oldest first; ``head_to_head`` most frequent opponents
    are kept (most played first)."""
    out = Career()
    run_win = 0
    meetings: dict[str, HeadToHead] = {}
    best_rating = None
    for found in matches:
        if out.peak is None or found.rating_after > out.peak.rating_after:
            out.peak = found
        result = found.result(player_id)
        if result == "win":
            out.wins += 1
            run_win += 1
            out.best_win_streak = max(out.best_win_streak, run_win)
            rating = found.opponent_rating(player_id)
            if rating is not None and (best_rating is None or rating > best_rating):
                best_rating = rating
                out.best_win = {
                    "item": found,
                    "opponents": found.opponents(player_id),
                    "opponent_rating": rating,
                }
        else:
            run_win = 0
            if result == "draw":
                out.draws += 1
            else:
                out.losses += 1
        out.streak = out.streak + 1 if result == out.streak_result else 1
        out.streak_result = result
        for opponent in found.opponents(player_id):
            h2h = meetings.setdefault(opponent, HeadToHead(opponent))
            if result == "win":
                h2h.wins += 1
            elif result == "draw":
                h2h.draws += 1
            else:
                h2h.losses += 1
    out.head_to_head = sorted(meetings.values(), key=lambda h: (-h.played, h.opponent))[:head_to_head]
    return out
