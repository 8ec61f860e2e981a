"""A player's career in numbers (record, peak, streaks, best win, head-to-head), its chart points and
match rows, for the player page.

The page gets the numbers from the ledger's bounded reads (``career_summary``, ``career_series``,
``career_page``); :func:`career` computes the same numbers from a whole career oldest first
(:class:`~sedma_elo.service.ledger.reads.CareerItem`) and is the reference they are tested against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from .chart import ChartPoint

if TYPE_CHECKING:
    from ..service.ledger.career import CareerSummary, SeriesPoint
    from ..service.ledger.career_item import CareerItem as CareerMatch
    from .lang import PageText

__all__ = ["Career", "HeadToHead", "career", "chart_points", "match_row"]


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

    @classmethod
    def of(cls, summary: CareerSummary) -> Career:
        """The page's view of the ledger's summary of a career."""
        found = summary.best_win
        return cls(
            summary.wins,
            summary.draws,
            summary.losses,
            summary.peak,
            summary.streak_result,
            summary.streak,
            summary.best_win_streak,
            None if found is None else _best_win(found, summary.player_id),
            [HeadToHead(*h) for h in summary.head_to_head],
        )


def _best_win(found: CareerMatch, player_id: str) -> dict[str, Any]:
    return {
        "item": found,
        "opponents": found.opponents(player_id),
        "opponent_rating": found.opponent_rating(player_id),
    }


def match_row(found: CareerMatch, player_id: str) -> dict[str, Any]:
    """One row of the page's match list."""
    return {
        "sequence": found.sequence,
        "match_id": found.match_id,
        "played_at": found.played_at,
        "rating_before": found.rating_before,
        "rating_after": found.rating_after,
        "delta": found.rating_after - found.rating_before,
        "opponents": found.opponents(player_id),
        "opponent_rating": found.opponent_rating(player_id),
        "result": found.result(player_id),
    }


def chart_points(series: Sequence[SeriesPoint], days: int | None, text: PageText) -> list[ChartPoint]:
    """The chart's points from the ledger's (thinned) series: the rating before the first match
    shown, then after each match kept, numbered by match of the career.

    With ``days`` (a range) and every match dated, the leading point stands at the range's start
    (``days`` before the last match), so the line begins at the left edge, as
    :func:`~sedma_elo.web.chart.in_range` places it.
    """
    if not series:
        return []
    head, last = series[0], series[-1].played_at
    start = None
    if days is not None and last is not None and all(p.played_at is not None for p in series):
        start = last - timedelta(days=days)
    label = text.gettext("start: {rating}", rating=head.rating_before) if head.number == 1 else ""
    lead = ChartPoint(head.number - 1, head.rating_before, label, start, None)
    points = [lead]
    points.extend(ChartPoint(p.number, p.rating_after, "", p.played_at, p.match_id) for p in series)
    return points


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
