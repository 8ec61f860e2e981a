"""The leaderboard's trend column against the JSON API's full history, computed independently."""

from __future__ import annotations

import html
import re
from typing import Any

from sedma_elo.service import MatchIn, submission_from_payload

from .conftest import Site

ROW = re.compile(r'<tr data-player="([^"]*)"')
TREND = re.compile(r'title="over the last (\d+) matches">([^<]*)</span>')
MINUS = "\u2212"


def trends(page: str) -> dict[str, tuple[int, int] | None]:
    """Each leaderboard row's (matches, change) as printed, or None when the row shows no trend."""
    out: dict[str, tuple[int, int] | None] = {}
    for chunk in page.split("<tr data-player=")[1:]:
        row = ROW.match("<tr data-player=" + chunk)
        assert row is not None
        pid = html.unescape(row.group(1))
        found = TREND.search(chunk.split("</tr>")[0])
        if found is None:
            out[pid] = None
            continue
        text = found.group(2).replace(MINUS, "-").replace("+", "")
        out[pid] = (int(found.group(1)), int(text))
    return out


def full_history(site: Site, player: str) -> list[dict[str, Any]]:
    """The player's whole history oldest first, through the JSON API's default (oldest first) pages."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 500}
    while True:
        page = site.client.get(f"/v1/players/{player}/history", params=params).json()
        items.extend(page["items"])
        if page["next_cursor"] is None:
            return items
        params["cursor"] = page["next_cursor"]


def expected_trend(site: Site, player: str) -> tuple[int, int]:
    """(matches, change) over the player's last 10 matches, from the full history."""
    last = full_history(site, player)[-10:]
    return len(last), last[-1]["rating_after"] - last[0]["rating_before"]


def play(site: Site, count: int, a: str, b: str, prefix: str) -> None:
    """Apply ``count`` matches of ``a`` against ``b`` through the service, results varying."""
    bodies = [
        {
            "match_id": f"{prefix}-{i}",
            "played_at": "2026-11-29T12:00:00Z",
            "player_a": a,
            "player_b": b,
            "winner": "ab"[(i * 7) % 3 == 0],
            "stats": {"a": {"won_by_16": i % 3}, "b": {"bad_moves": i % 2}},
        }
        for i in range(count)
    ]
    outcomes = site.ledger.apply([submission_from_payload(MatchIn.model_validate(b)) for b in bodies])
    assert all(o.status == "created" for o in outcomes)


def test_every_trend_is_the_change_over_the_last_ten_matches(site: Site) -> None:
    """Each row's trend equals last rating minus the rating before its 10th most recent match."""
    play(site, 14, "zed", "yan", "z")
    shown = trends(site.client.get("/?limit=100").text)
    assert shown["zed"] is not None and shown["zed"][0] == 10
    for player, trend in shown.items():
        assert trend == expected_trend(site, player), player


def test_a_void_changes_the_trend_at_once(site: Site) -> None:
    """Right after an admin voids a player's latest match, the leaderboard shows the new trend."""
    play(site, 12, "zed", "yan", "z")
    before = trends(site.client.get("/?limit=100").text)["zed"]
    site.ledger.void("z-11", "test")
    after = trends(site.client.get("/?limit=100").text)["zed"]
    assert after == expected_trend(site, "zed")
    assert after != before  # so a trend cached from before the void would fail the line above


def test_a_player_with_more_than_500_matches_has_a_trend(site: Site) -> None:
    """The trend no longer stops at 500 matches: 520 matches show the last 10 like anyone else."""
    play(site, 520, "zed", "yan", "long")
    shown = trends(site.client.get("/?limit=100").text)
    assert shown["zed"] == expected_trend(site, "zed")
    assert shown["yan"] == expected_trend(site, "yan")
