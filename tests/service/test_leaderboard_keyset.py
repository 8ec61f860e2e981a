"""Leaderboard pages and a player's neighbours read as ranges of the rank index (``LEADERBOARD_AFTER``,
``Ledger.around``): at every page size, and around every player, they equal a brute-force order by
(rating high to low, id), ties included, on both databases."""

from __future__ import annotations

import asyncio
import random
import tempfile

from ledgers import empty_ledger

from sedma_elo.core.model import Match
from sedma_elo.service import Ledger

PLAYERS = [f"p{i:02d}" for i in range(30)]


def _tied_league(ledger: Ledger) -> list[tuple[str, int]]:
    """Draws and decisive matches among 30 players (many equal ratings); the expected order."""
    rng = random.Random(11)
    matches = []
    for i in range(70):
        a, b = rng.sample(PLAYERS, 2)
        # Mostly draws between equals: many players end on the same rating.
        winner = "draw" if i % 3 else rng.choice(("a", "b"))
        matches.append(Match.single(a, b, winner, match_id=f"t{i}"))  # type: ignore[arg-type]
    ledger.import_matches(matches, batch=9)
    with ledger.db.read.connect() as conn:
        rows = conn.exec_driver_sql(
            f"SELECT player_id, rating FROM player_ratings WHERE version_id = {ledger.active_id()}"
        ).all()
    return sorted(((str(p), int(r)) for p, r in rows), key=lambda pr: (-pr[1], pr[0]))


def test_pages_at_every_size_equal_the_brute_force_order(db_url: str) -> None:
    """Following cursors at page sizes 1..7 lists every player once, in order, with ranks 1..n."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        want = _tied_league(ledger)
        assert len({r for _, r in want}) < len(want) - 5, "the league should have ties"
        for size in range(1, 8):
            seen, cursor = [], None
            while True:
                page = ledger.leaderboard(size, cursor)
                seen += page.items
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert [(i["player_id"], i["rating"]) for i in seen] == want
            assert [i["rank"] for i in seen] == list(range(1, len(want) + 1))


def test_around_every_player_equals_the_brute_force_window(db_url: str) -> None:
    """around(player, span) is the player's rank with the span above and below, ties by id."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        want = _tied_league(ledger)
        for at, (pid, _) in enumerate(want):
            for span in (1, 3):
                lo, hi = max(0, at - span), min(len(want), at + span + 1)
                items = ledger.around(pid, span).items
                assert [(i["rank"], i["player_id"]) for i in items] == [
                    (n + 1, want[n][0]) for n in range(lo, hi)
                ]


def test_the_awaited_around_equals_the_blocking_one(db_url: str) -> None:
    """around_async (the route's read) gives every player the page around() gives."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        want = _tied_league(ledger)

        async def pages() -> list[object]:
            try:
                return [(await ledger.around_async(pid, 2)).items for pid, _ in want]
            finally:
                await ledger.reader.close()

        assert asyncio.run(pages()) == [ledger.around(pid, 2).items for pid, _ in want]
