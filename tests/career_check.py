"""One check shared by the career tests: a ledger's career summary against the whole career read."""

from __future__ import annotations

from sedma_elo.service import Ledger
from sedma_elo.web.profile import career


def assert_summary_is_whole_careers(ledger: Ledger, player: str) -> None:
    """The ledger's summary equals the reference computed from the whole career read."""
    got = ledger.career_summary(player)
    items = ledger.player_career(player)
    want = career(player, items)
    assert (got.wins, got.draws, got.losses) == (want.wins, want.draws, want.losses)
    assert (got.streak_result, got.streak, got.best_win_streak) == (
        want.streak_result,
        want.streak,
        want.best_win_streak,
    )
    assert got.peak == want.peak
    assert got.best_win == (want.best_win["item"] if want.best_win else None)
    assert got.head_to_head == [(h.opponent, h.wins, h.draws, h.losses) for h in want.head_to_head]
    assert (got.first_played, got.last_played) == (items[0].played_at, items[-1].played_at)
