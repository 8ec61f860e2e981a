"""Which kept answers a move can make stale: the mover's, and the pages whose window holds a place."""

from __future__ import annotations

import json

from sedma_elo.service.api.kept_reads import KeptReads, Moved, moves
from sedma_elo.service.ledger.cursors import encode_cursor
from sedma_elo.service.ledger.feed_events import match_event, match_player

MID = ("/v1/leaderboard", f"cursor={encode_cursor(1100, 'b', 2)}".encode())
TOP = ("/v1/leaderboard", b"limit=1")
ZED = ("/v1/players/zed", b"")


def _page(items: list[tuple[str, int]], more: bool) -> bytes:
    rows = [
        {"rank": n + 1, "player_id": p, "rating": r, "matches_played": 1} for n, (p, r) in enumerate(items)
    ]
    nxt = encode_cursor(items[-1][1], items[-1][0], len(items)) if more else None
    return json.dumps({"items": rows, "next_cursor": nxt, "ratings_version": 1}).encode()


def _kept_after(moved: Moved) -> set[tuple[str, bytes]]:
    """Keep a page after (1100, "b") through (1000, "d"), the top page through (1200, "a"), a player."""
    kept: KeptReads[str] = KeptReads(10)
    kept.keep(MID, "mid", _page([("c", 1050), ("d", 1000)], more=True))
    kept.keep(TOP, "top", _page([("a", 1200)], more=True))
    kept.keep(ZED, "zed", b"{}")
    kept.drop([moved])
    return {k for k in (MID, TOP, ZED) if kept.get(k) is not None}


def test_a_move_below_every_window_leaves_the_pages() -> None:
    """A player moving from 900 to 950 (below both pages' last items) leaves every answer kept."""
    assert _kept_after(Moved(1, "x", 900, 950)) == {MID, TOP, ZED}


def test_a_move_into_a_window_drops_that_page_only() -> None:
    """From 900 to 1060: into the middle page (after its cursor, above its last item)."""
    assert _kept_after(Moved(1, "x", 900, 1060)) == {
        ("/v1/leaderboard", b"limit=1"),
        ("/v1/players/zed", b""),
    }


def test_a_move_above_a_cursor_leaves_that_page() -> None:
    """From 1150 to 1300: above the middle page's cursor (its ranks come from it), into the top page."""
    kept = _kept_after(Moved(1, "x", 1150, 1300))
    assert kept == {
        ("/v1/leaderboard", b"cursor=" + encode_cursor(1100, "b", 2).encode()),
        ("/v1/players/zed", b""),
    }


def test_a_move_out_of_the_rows_below_drops_a_page_with_a_next_cursor() -> None:
    """From 900 (below both pages) to 1300: the row that made their next cursors may have gone."""
    assert _kept_after(Moved(1, "x", 900, 1300)) == {ZED}


def test_a_move_from_above_to_below_leaves_the_middle_page() -> None:
    """From 1150 (above the middle page's cursor) to 900: its rows and its next cursor stand."""
    assert MID in _kept_after(Moved(1, "x", 1150, 900))


def test_the_mover_s_own_answer_is_dropped() -> None:
    """The player's answer goes even when no page moves; another version's move drops no page."""
    assert _kept_after(Moved(2, "zed", 1050, 1060)) == {MID, TOP}


def test_a_void_among_match_events_moves_anything() -> None:
    """``moves`` reads a match's players, and answers None once a void is among the events."""
    match = json.dumps(
        {"version_id": 1, "players": [{"player_id": "a", "rating_before": 1000, "rating_after": 1020}]}
    )
    assert moves([("match", match)]) == [Moved(1, "a", 1000, 1020)]
    assert moves([("match", match), ("void", "{}")]) is None


def test_moves_reads_the_compact_match_event() -> None:
    """``moves`` reads the players of a match event as the writers store it (compact array)."""
    _, _, data, _ = match_event(
        3, "m-1", 7, None, [match_player("a", 1000, 1020), match_player("b", 990, 970)], "t"
    )
    assert moves([("match", data)]) == [Moved(3, "a", 1000, 1020), Moved(3, "b", 990, 970)]
