"""The leaderboard without provisional players, over a stand-in for the service's keyset pages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedma_elo.errors import ValidationError
from sedma_elo.web.board import MAX_READS, READ, established_page


class Board:
    """The service's ``leaderboard(limit, cursor)`` over a fixed list (the cursor is an offset)."""

    def __init__(self, played: list[int]) -> None:
        self.rows = [
            {"rank": i + 1, "player_id": f"p{i:05d}", "rating": 3000 - i, "matches_played": n}
            for i, n in enumerate(played)
        ]
        self.reads = 0

    def leaderboard(self, limit: int, cursor: str | None) -> dict[str, Any]:
        assert 1 <= limit <= 500
        self.reads += 1
        start = int(cursor) if cursor else 0
        items = self.rows[start : start + limit]
        more = start + limit < len(self.rows)
        return {"items": items, "next_cursor": str(start + limit) if more else None, "version_id": 1}


def walk(board: Board, limit: int, threshold: int) -> tuple[list[dict[str, Any]], int]:
    """Every row of every page, following the cursors, and the number of pages."""
    rows: list[dict[str, Any]] = []
    cursor, pages = None, 0
    while True:
        page, cursor, _ = established_page(board, limit, cursor, threshold)
        assert len(page) <= limit
        rows.extend(page)
        pages += 1
        if cursor is None:
            return rows, pages


@settings(deadline=None)  # timing on a shared, loaded machine is not the property
@given(st.lists(st.integers(0, 20), max_size=700), st.integers(1, 60), st.integers(0, 15))
def test_pages_list_every_established_player_once_ranked_from_one(
    played: list[int], limit: int, threshold: int
) -> None:
    """The cursors walk exactly the players with >= threshold matches, in order, ranked 1, 2, ..."""
    board = Board(played)
    rows, _ = walk(board, limit, threshold)
    expected = [r["player_id"] for r in board.rows if r["matches_played"] >= threshold]
    assert [r["player_id"] for r in rows] == expected
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))


def test_a_long_run_of_provisional_players_is_read_in_bounded_steps() -> None:
    """25,000 newcomers after 3 regulars: no page makes more than MAX_READS service reads."""
    board = Board([30, 30, 30] + [1] * 25_000 + [12])
    cursor = None
    found: list[str] = []
    while True:
        board.reads = 0
        page, cursor, _ = established_page(board, 50, cursor, 10)
        assert board.reads <= MAX_READS
        found.extend(r["player_id"] for r in page)
        if cursor is None:
            break
    assert found == ["p00000", "p00001", "p00002", "p25003"]
    assert READ * MAX_READS < 25_000  # the test does cross several bounded pages


@pytest.mark.parametrize("cursor", ["not-base64!", "WzEsMiwzXQ", "bnVsbA", "WyJhIiwgNTAwLCAxXQ"])
def test_a_damaged_cursor_is_a_validation_error(cursor: str) -> None:
    """A cursor this page did not make names the field and raises ValidationError."""
    with pytest.raises(ValidationError, match="cursor"):
        established_page(Board([20] * 5), 2, cursor, 10)
