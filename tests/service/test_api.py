"""The HTTP contract: paths, status codes and bodies, on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from conftest import Api, make_api, single
from sedma_elo import REFERENCE_RULES, Match, PlayerStats, rate
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database

ISSUE_BODY = {
    "match_id": "m-1",
    "played_at": "2026-11-29T12:00:00Z",
    "player_a": "alice",
    "player_b": "bob",
    "winner": "a",
    "stats": {
        "a": {"bad_moves": 0, "won_by_16": 1, "won_by_24": 0, "won_by_4_and_last": 0},
        "b": {"bad_moves": 2, "won_by_16": 0, "won_by_24": 0, "won_by_4_and_last": 0},
    },
}


def test_post_answers_201_with_sequence_and_explained_changes(api: Api) -> None:
    """The issue's example: both start at 1000; alice +20 (K 40 * (1 - 0.5)), bob -20 (score clamps at 0)."""
    r = api.post(ISSUE_BODY)
    assert r.status_code == 201
    body = r.json()
    assert body["sequence"] >= 1
    assert body["match"]["player_a"] == "alice"
    after = {c["player_id"]: (c["rating_before"], c["rating_after"]) for c in body["changes"]}
    assert after == {"alice": (1000, 1020), "bob": (1000, 980)}
    assert all(c["explanation"] for c in body["changes"])


def test_same_body_again_answers_200_with_the_same_bytes(api: Api) -> None:
    """A repeat is answered 200 with exactly the first body, and nothing changes."""
    first = api.post(ISSUE_BODY)
    again = api.post(ISSUE_BODY)
    assert again.status_code == 200
    assert again.content == first.content
    assert api.get("/v1/players/alice").json()["matches_played"] == 1


def test_same_body_written_differently_is_the_same_match(api: Api) -> None:
    """Omitted zero counts and another time zone spelling of the same instant are the same body."""
    first = api.post(ISSUE_BODY)
    variant = dict(
        ISSUE_BODY,
        played_at="2026-11-29T13:00:00+01:00",
        stats={"a": {"won_by_16": 1}, "b": {"bad_moves": 2}},
    )
    again = api.post(variant)
    assert again.status_code == 200
    assert again.content == first.content


def test_same_id_different_body_answers_409(api: Api) -> None:
    """Reusing a match_id for another result is a conflict and changes nothing."""
    api.post(ISSUE_BODY)
    r = api.post(dict(ISSUE_BODY, winner="b"))
    assert r.status_code == 409
    assert api.get("/v1/players/alice").json()["rating"] == 1020


@pytest.mark.parametrize("key", [None, "sk_not_a_key_at_all_0000000000000000"])
def test_missing_or_wrong_key_answers_401(api: Api, key: str | None) -> None:
    """Writes need a known key."""
    r = api.client.post("/v1/matches", json=ISSUE_BODY, headers=api.headers(key))
    assert r.status_code == 401
    assert api.get("/v1/players/alice").status_code == 404


def test_write_key_cannot_use_admin_routes(api: Api) -> None:
    """A write key on an admin route answers 403."""
    api.post(ISSUE_BODY)
    r = api.client.post("/v1/admin/matches/m-1/void", json={}, headers=api.headers(api.write_key))
    assert r.status_code == 403


def test_key_label_with_nul_answers_422(api: Api) -> None:
    """A key label holding a NUL (which PostgreSQL text cannot store) is refused, not a 500."""
    r = api.admin("/v1/admin/keys", {"scope": "write", "label": "a\x00b"})
    assert r.status_code == 422
    assert "label" in r.text


def test_revoked_key_answers_401(db_url: str) -> None:
    """A key revoked through the admin API stops working at once in this process."""
    for api in make_api(db_url):
        key = api.admin("/v1/admin/keys", {"scope": "write"}).json()
        assert api.post(single("r-1"), key=key["key"]).status_code == 201
        api.client.delete(f"/v1/admin/keys/{key['id']}", headers=api.headers(api.admin_key))
        assert api.post(single("r-2"), key=key["key"]).status_code == 401


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"stats": {"a": {"bad_moves": -1}, "b": {}}}, "bad_moves"),
        ({"player_b": "alice"}, "player_b"),
        ({"colour": "red"}, "colour"),
        ({"player_a": "x" * 129}, "player_a"),
        ({"match_id": ""}, "match_id"),
        ({"winner": "c"}, "winner"),
        ({"stats": {"zed": {}}}, "zed"),
        ({"played_at": "2026-11-29T12:00:00"}, "played_at"),
    ],
)
def test_invalid_body_answers_422_naming_the_field(api: Api, change: dict[str, object], field: str) -> None:
    """Every refusal names the offending field and stores nothing."""
    r = api.post({**ISSUE_BODY, **change})
    assert r.status_code == 422
    locs = [loc for err in r.json()["detail"] for loc in err["loc"]]
    assert field in locs
    assert api.get("/v1/leaderboard").json()["items"] == []


def test_oversized_request_answers_413(api: Api) -> None:
    """A body above the size limit is refused before parsing."""
    r = api.client.post(
        "/v1/matches", content=b"{" + b" " * 20_000 + b"}", headers=api.headers(api.write_key)
    )
    assert r.status_code == 413


def test_get_match_equals_the_post_answer(api: Api) -> None:
    """GET /v1/matches/{id} repeats the explanation POST returned."""
    posted = api.post(ISSUE_BODY).json()
    assert api.get("/v1/matches/m-1").json() == posted
    assert api.get("/v1/matches/nope").status_code == 404


def test_team_match_and_draw_forms(api: Api) -> None:
    """A 2-vs-2 draw applies each player's own stats; expectations from the pure engine."""
    body = {
        "match_id": "t-1",
        "team_a": ["alice", "carol"],
        "team_b": ["bob", "dave"],
        "winner": "draw",
        "stats": {"carol": {"won_by_16": 2}},
    }
    r = api.post(body)
    assert r.status_code == 201
    want = rate(
        Match(("alice", "carol"), ("bob", "dave"), "draw", {"carol": PlayerStats(won_by_16=2)}),
        {},
        REFERENCE_RULES,
    )
    got = {c["player_id"]: c["rating_after"] for c in r.json()["changes"]}
    assert got == want.new_ratings
    assert got["carol"] > got["alice"]  # the same draw, plus a bonus


def test_player_and_history_pages(api: Api) -> None:
    """History lists the rating after each match in order and pages with a cursor."""
    for i in range(5):
        api.post(single(f"h-{i}", winner="a" if i % 2 else "b"))
    player = api.get("/v1/players/alice").json()
    assert player["player_id"] == "alice" and player["matches_played"] == 5
    first = api.get("/v1/players/alice/history", limit=3).json()
    rest = api.get("/v1/players/alice/history", limit=3, cursor=first["next_cursor"]).json()
    items = first["items"] + rest["items"]
    assert [i["match_id"] for i in items] == [f"h-{i}" for i in range(5)]
    assert rest["next_cursor"] is None
    assert all(a["rating_after"] == b["rating_before"] for a, b in itertools.pairwise(items))
    assert items[-1]["rating_after"] == player["rating"]


def test_leaderboard_order_ties_and_cursor(api: Api) -> None:
    """Highest first, equal ratings by player id, keyset pages cover everyone once with running ranks."""
    api.post(single("l-1", "p1", "p2"))
    api.post(single("l-2", "p3", "p4"))
    api.post(single("l-3", "p5", "p6", winner="b"))
    seen = []
    cursor = None
    while True:
        page = api.get("/v1/leaderboard", limit=2, **({"cursor": cursor} if cursor else {})).json()
        seen += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    # p1, p3, p6 won (1020), the others lost (980); ties ordered by id.
    assert [i["player_id"] for i in seen] == ["p1", "p3", "p6", "p2", "p4", "p5"]
    assert [i["rank"] for i in seen] == [1, 2, 3, 4, 5, 6]


def test_leaderboard_around_a_player(api: Api) -> None:
    """around/{id} gives the exact rank with neighbours on both sides."""
    api.post(single("a-1", "p1", "p2"))
    api.post(single("a-2", "p3", "p4"))
    items = api.get("/v1/leaderboard/around/p3", span=1).json()["items"]
    assert [(i["rank"], i["player_id"]) for i in items] == [(1, "p1"), (2, "p3"), (3, "p2")]
    assert api.get("/v1/leaderboard/around/ghost").status_code == 404


def test_bad_cursor_and_limit_answer_422(api: Api) -> None:
    """A forged cursor or a page size above the limit is refused."""
    assert api.get("/v1/leaderboard", cursor="garbage!").status_code == 422
    assert api.get("/v1/leaderboard", limit=501).status_code == 422


def test_void_recomputes_everything_after(api: Api) -> None:
    """After voiding the first match, the second is rated as if the first never happened."""
    api.post(single("v-1", "alice", "bob"))
    api.post(single("v-2", "alice", "carol"))
    r = api.admin("/v1/admin/matches/v-1/void", {"reason": "cheating"})
    assert r.status_code == 200 and r.json()["voided"] is True
    alone = rate(Match.single("alice", "carol", "a"), {}, REFERENCE_RULES).new_ratings
    assert api.get("/v1/players/alice").json()["rating"] == alone["alice"]
    assert api.get("/v1/players/bob").status_code == 404
    assert api.get("/v1/matches/v-2").json()["changes"][0]["rating_before"] == 1000


def test_rerate_creates_a_new_active_version_and_keeps_the_old(api: Api) -> None:
    """New rules re-rate the ledger into a new version; the old version stays readable."""
    api.post(single("r-1"))
    toml = REFERENCE_RULES.replace(version="2.0", initial_rating=1500).to_toml()
    r = api.admin("/v1/admin/rules", {"rules_toml": toml, "label": "start at 1500"})
    assert r.status_code == 201
    new_id = r.json()["id"]
    assert api.get("/v1/players/alice").json()["rating"] == 1516  # K is 32 at 1500: 1500 + 32 * 0.5
    assert api.get("/v1/players/alice", version=1).json()["rating"] == 1020
    versions = api.get("/v1/versions").json()["items"]
    assert [v["active"] for v in versions] == [False, True] and versions[1]["id"] == new_id
    assert api.admin("/v1/admin/versions/1/activate", None).status_code == 200
    assert api.get("/v1/players/alice").json()["rating"] == 1020


def test_inactive_version_is_a_snapshot_caught_up_on_activation(api: Api) -> None:
    """Matches posted after a switch go to the active version; re-activating the old one catches it up."""
    api.post(single("s-1"))
    toml = REFERENCE_RULES.replace(version="2.0").to_toml()
    assert api.admin("/v1/admin/rules", {"rules_toml": toml}).status_code == 201
    api.post(single("s-2"))
    assert api.get("/v1/players/alice", version=1).json()["matches_played"] == 1
    assert api.get("/v1/players/alice").json()["matches_played"] == 2
    assert api.admin("/v1/admin/versions/1/activate", None).status_code == 200
    assert api.get("/v1/players/alice").json()["matches_played"] == 2
    ratings: dict[str, int] = {}
    for m in (Match.single("alice", "bob", "a"), Match.single("alice", "bob", "a")):
        ratings.update(rate(m, ratings, REFERENCE_RULES).new_ratings)
    assert api.get("/v1/players/alice").json()["rating"] == ratings["alice"]
    db = open_database(api.url, migrate=False)
    try:
        assert Ledger(db).verify().ok
    finally:
        db.dispose()


def test_bad_rules_answer_422_naming_the_key(api: Api) -> None:
    """Invalid TOML rules are refused with the key named."""
    r = api.admin("/v1/admin/rules", {"rules_toml": "[malus]\nmax = 7\n"})
    assert r.status_code == 422
    assert "max" in r.json()["detail"][0]["loc"]


@pytest.fixture
def limited(db_url: str) -> Iterator[Api]:
    yield from make_api(db_url, rate_limit=1.0, rate_burst=3)


def test_rate_limit_answers_429(limited: Api) -> None:
    """A key over its bucket gets 429 with Retry-After."""
    codes = [limited.post(single(f"q-{i}")).status_code for i in range(5)]
    assert codes[:3] == [201, 201, 201]
    assert 429 in codes[3:]


def test_openapi_and_docs_are_served(api: Api) -> None:
    """The schema lists the contract's paths; the docs page answers."""
    paths = api.get("/openapi.json").json()["paths"]
    for path in ("/v1/matches", "/v1/matches/{match_id}", "/v1/players/{player_id}", "/v1/leaderboard"):
        assert path in paths
    assert api.get("/docs").status_code == 200


def test_void_after_a_rerate_leaves_the_older_snapshot_as_it_was(api: Api) -> None:
    """A void rebuilds an inactive version only as far as its snapshot reaches; verify still passes."""
    api.post(single("v-0", a="ann", b="ben"))
    toml = REFERENCE_RULES.replace(version="2.0").to_toml()
    assert api.admin("/v1/admin/rules", {"rules_toml": toml}).status_code == 201
    for i in range(1, 4):
        api.post(single(f"v-{i}", a="ann", b="ben"))
    snapshot = api.get("/v1/players/ann", version=1).json()
    assert api.admin("/v1/admin/matches/v-2/void", {"reason": "t"}).status_code == 200
    assert api.get("/v1/players/ann", version=1).json() == snapshot  # one match, as before the void
    assert api.get("/v1/players/ann").json()["matches_played"] == 3
    db = open_database(api.url, migrate=False)
    try:
        assert Ledger(db).verify().ok
    finally:
        db.dispose()
