"""A small, fixed match history for the page tests, in the JSON form of ``POST /v1/matches``."""

from __future__ import annotations

from typing import Any

#: A player id a hostile client could choose: it must render as text everywhere.
XSS_ID = "<script>alert('pwned')"
XSS_MATCH_ID = "m-<i>italic"


def full_history(ledger: Any, player_id: str) -> list[dict[str, Any]]:
    """Every item of the player's history oldest first, through the service's paged history read."""
    history: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = ledger.player_history(player_id, limit=500, cursor=cursor)
        history.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return history


def _stats(**counts: int) -> dict[str, int]:
    return {"bad_moves": 0, "won_by_16": 0, "won_by_24": 0, "won_by_4_and_last": 0, **counts}


def _match(
    match_id: str, a: str, b: str, winner: str, day: int, hour: int, sa: dict[str, int], sb: dict[str, int]
) -> dict[str, Any]:
    return {
        "match_id": match_id,
        "played_at": f"2026-11-{day:02d}T{hour:02d}:00:00Z",
        "player_a": a,
        "player_b": b,
        "winner": winner,
        "stats": {"a": sa, "b": sb},
    }


def seed_matches() -> list[dict[str, Any]]:
    """The history, oldest first.

    The first match is worked out by hand in the tests: alice and bob both start at 1000 (expected
    score 0.5, K 40); alice wins with four 16ers (4 x 0.05 = 0.20, capped at 0.15), her score 1.15
    is clamped to 1, so she gains 40 x 0.5 = +20; bob, with three bad moves (-0.06, clamped up to
    0), loses 20.
    """
    out = [
        _match("m-001", "alice", "bob", "a", 1, 12, _stats(won_by_16=4), _stats(bad_moves=3)),
        _match(XSS_MATCH_ID, XSS_ID, "carol", "a", 2, 9, _stats(won_by_24=1), _stats()),
        _match("m-003", "carol", "dave", "b", 2, 23, _stats(), _stats(won_by_4_and_last=2)),
    ]
    # Thirty more matches for alice, so that her match list has two pages; opponents rotate.
    opponents = ["bob", "carol", "dave", XSS_ID, "erin"]
    for i in range(30):
        winner = "a" if i % 3 else "b"
        out.append(
            _match(
                f"m-{i + 4:03d}",
                "alice",
                opponents[i % 5],
                winner,
                3 + i // 2,
                8 + i % 12,
                _stats(),
                _stats(),
            )
        )
    return out
