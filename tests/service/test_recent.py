"""Newest-first history and the batched recent changes, over HTTP on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from conftest import Api, single
from sedma_elo.errors import ValidationError
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database

#: Who plays whom in the seeded history (alice plays in every match, so she has the longest history).
OPPONENTS = ["bob", "carol", "bob", "dave", "carol", "bob", "carol", "dave", "bob", "carol", "bob", "dave"]


def seed(api: Api) -> None:
    """Twelve matches, alice against the others in turn, results alternating."""
    for i, other in enumerate(OPPONENTS):
        assert api.post(single(f"r-{i:02d}", "alice", other, winner="ab"[i % 3 == 0])).status_code == 201


def all_pages(api: Api, player: str, limit: int, **params: Any) -> list[dict[str, Any]]:
    """Every history item of ``player``, following next_cursor with ``limit`` a page."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        extra = dict(params, cursor=cursor) if cursor else params
        page = api.get(f"/v1/players/{player}/history", limit=limit, **extra)
        assert page.status_code == 200, page.text
        items.extend(page.json()["items"])
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return items


def test_desc_pages_are_the_asc_history_reversed(api: Api) -> None:
    """Newest first, paged 5 at a time, is exactly the oldest-first history backwards."""
    seed(api)
    oldest_first = all_pages(api, "alice", 500)
    newest_first = all_pages(api, "alice", 5, order="desc")
    assert [i["match_id"] for i in oldest_first] == [f"r-{i:02d}" for i in range(len(OPPONENTS))]
    assert newest_first == oldest_first[::-1]
    assert all(a["rating_before"] == b["rating_after"] for a, b in itertools.pairwise(newest_first))
    assert newest_first[0]["rating_after"] == api.get("/v1/players/alice").json()["rating"]


def test_a_cursor_only_continues_its_own_order(api: Api) -> None:
    """A cursor from one order is refused (422 naming the cursor) by the other."""
    seed(api)
    desc = api.get("/v1/players/alice/history", limit=2, order="desc").json()["next_cursor"]
    asc = api.get("/v1/players/alice/history", limit=2).json()["next_cursor"]
    for cursor, order in ((desc, "asc"), (asc, "desc")):
        r = api.get("/v1/players/alice/history", limit=2, order=order, cursor=cursor)
        assert r.status_code == 422
        assert r.json()["detail"][0]["loc"] == ["query", "cursor"]


def test_an_unknown_order_is_refused(api: Api) -> None:
    """order must be asc or desc."""
    seed(api)
    r = api.get("/v1/players/alice/history", order="newest")
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["query", "order"]


def test_recent_changes_are_the_start_of_each_newest_first_history(api: Api) -> None:
    """For every player, recent-changes with n gives the first n items of their full history, reversed."""
    seed(api)
    players = ["alice", "bob", "carol", "dave", "nobody"]
    for n in (1, 3, 10):
        answer = api.get("/v1/recent-changes", players=players, n=n)
        assert answer.status_code == 200
        got = answer.json()["items"]
        assert set(got) == set(players)
        for player in players[:-1]:
            assert got[player] == all_pages(api, player, 500)[::-1][:n]
        assert got["nobody"] == []


def test_recent_changes_follow_a_void_at_once(api: Api) -> None:
    """After an admin voids alice's last match, her recent changes no longer hold it."""
    seed(api)
    before = api.get("/v1/recent-changes", players=["alice"], n=3).json()["items"]["alice"]
    assert before[0]["match_id"] == "r-11"
    assert api.admin("/v1/admin/matches/r-11/void", {"reason": "test"}).status_code == 200
    after = api.get("/v1/recent-changes", players=["alice"], n=3).json()["items"]["alice"]
    assert [i["match_id"] for i in after] == ["r-10", "r-09", "r-08"]


def test_recent_changes_bounds(api: Api) -> None:
    """n outside 1..100, no player, or more than 100 players is a 422 naming the query field."""
    seed(api)
    for params, field in (
        ({"players": ["alice"], "n": 0}, "n"),
        ({"players": ["alice"], "n": 101}, "n"),
        ({}, "players"),
        ({"players": [f"p{i}" for i in range(101)]}, "players"),
    ):
        r = api.get("/v1/recent-changes", **params)
        assert r.status_code == 422, params
        assert r.json()["detail"][0]["loc"][:2] == ["query", field]


def test_ledger_refuses_too_many_players(db_url: str) -> None:
    """The Ledger itself refuses more than 100 distinct players (the limit holds for every caller)."""
    db = open_database(db_url)
    try:
        ledger = Ledger(db)
        ledger.ensure_version()
        assert ledger.recent_changes([], 10) == {}
        assert ledger.recent_changes(["x"] * 300, 10) == {"x": []}
        with pytest.raises(ValidationError, match="players"):
            ledger.recent_changes([f"p{i}" for i in range(101)], 10)
    finally:
        db.dispose()


SEARCH_IDS = ["al", "alice", "alina", "alí", "al~x", "bob", "Alice", "a", "b-al"]


def test_prefix_search_lists_the_ids_starting_with_it(api: Api) -> None:
    """GET /v1/players?prefix= lists exactly the ids starting with the prefix, in code point order."""
    for i, (a, b) in enumerate(zip(SEARCH_IDS[::2], SEARCH_IDS[1::2], strict=False)):
        assert api.post(single(f"s-{i}", a, b)).status_code == 201
    assert api.post(single("s-last", SEARCH_IDS[-1], "zz")).status_code == 201
    everyone = [*SEARCH_IDS, "zz"]
    for prefix in ("al", "ali", "A", "a", "b", "zz", "q", "al~"):
        got = api.get("/v1/players", prefix=prefix).json()["items"]
        assert [g["player_id"] for g in got] == sorted(p for p in everyone if p.startswith(prefix)), prefix
        for g in got:
            assert g["rating"] == api.get(f"/v1/players/{g['player_id']}").json()["rating"]
    limited = api.get("/v1/players", prefix="al", limit=2).json()["items"]
    assert [g["player_id"] for g in limited] == ["al", "alice"]


def test_prefix_search_refuses_bad_input(api: Api) -> None:
    """An empty prefix, a control character or a limit out of 1..100 is a 422 naming the field."""
    seed(api)
    for params, field in (
        ({"prefix": ""}, "prefix"),
        ({"prefix": "a\x00"}, "prefix"),
        ({"prefix": "a", "limit": 0}, "limit"),
        ({"prefix": "a", "limit": 101}, "limit"),
    ):
        r = api.get("/v1/players", **params)
        assert r.status_code == 422, params
        assert r.json()["detail"][0]["loc"][:2] == ["query", field]
