"""GET /v1/changes: the change feed as JSON pages and as an NDJSON stream, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading
from typing import Any

from pydantic import TypeAdapter

from conftest import Api, single
from sedma_elo.core.rules import REFERENCE_RULES
from sedma_elo.service.api.feed_schemas import ChangesOut
from sedma_elo.service.ledger import Ledger
from sedma_elo.service.payload import MatchIn, submission_from_payload
from sedma_elo.storage import open_database

NDJSON = {"Accept": "application/x-ndjson"}


def _page(api: Api, **params: Any) -> dict[str, Any]:
    response = api.get("/v1/changes", **params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    ChangesOut.model_validate(body)  # the documented shape
    return body


def _all(api: Api) -> list[dict[str, Any]]:
    response = api.client.get("/v1/changes", headers=NDJSON)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


def _ratings(api: Api, *players: str) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for p in players:
        r = api.get(f"/v1/players/{p}")
        out[p] = r.json()["rating"] if r.status_code == 200 else None
    return out


def test_each_applied_match_is_an_item_with_its_players_before_and_after(api: Api) -> None:
    """Two matches: two items in order, each player's before/after equal to their history's row."""
    api.post(single("m-1", "alice", "bob"))
    api.post(single("m-2", "alice", "carol", winner="b"))
    items = _page(api)["items"]
    assert [(i["sequence"], i["kind"], i["match_id"]) for i in items] == [
        (1, "match", "m-1"),
        (2, "match", "m-2"),
    ]
    history = api.get("/v1/players/alice/history").json()["items"]
    for item, row in zip(items, history, strict=True):
        alice = next(p for p in item["players"] if p["player_id"] == "alice")
        assert (alice["rating_before"], alice["rating_after"]) == (row["rating_before"], row["rating_after"])
        assert alice["delta"] == row["rating_after"] - row["rating_before"]
        assert item["match_sequence"] == row["sequence"] and item["played_at"] == row["played_at"]
    assert {p["player_id"] for p in items[1]["players"]} == {"alice", "carol"}


def test_a_repeat_or_a_refused_match_adds_no_item(api: Api) -> None:
    """A repeated body and a match the API refuses leave the feed as it was."""
    api.post(single("m-1"))
    assert api.post(single("m-1")).status_code == 200
    assert api.post(single("m-1", winner="b")).status_code == 409
    assert api.post({**single("m-2"), "winner": "x"}).status_code == 422
    assert [i["match_id"] for i in _page(api)["items"]] == ["m-1"]


def test_pages_follow_next_after_and_poll_after(api: Api) -> None:
    """limit=2 over three items: a full page points on; the last page says null and where to poll."""
    for n in range(3):
        api.post(single(f"m-{n}", f"p{n}", f"q{n}"))
    first = _page(api, limit=2)
    assert [i["sequence"] for i in first["items"]] == [1, 2] and first["next_after"] == 2
    second = _page(api, after=first["next_after"], limit=2)
    assert [i["sequence"] for i in second["items"]] == [3]
    assert second["next_after"] is None and second["poll_after"] == 3
    empty = _page(api, after=3)
    assert empty == {"items": [], "next_after": None, "poll_after": 3}


def test_a_void_is_an_item_with_every_changed_current_rating(api: Api) -> None:
    """Voiding the first of two matches sharing alice: the item lists alice, bob and carol as they moved."""
    api.post(single("v-1", "alice", "bob"))
    api.post(single("v-2", "alice", "carol"))
    api.post(single("v-3", "dave", "erin"))
    before = _ratings(api, "alice", "bob", "carol", "dave")
    assert api.admin("/v1/admin/matches/v-1/void", {"reason": "cheating"}).status_code == 200
    after = _ratings(api, "alice", "bob", "carol", "dave")
    void = _page(api)["items"][-1]
    assert (void["sequence"], void["kind"], void["match_id"], void["reason"]) == (
        4,
        "void",
        "v-1",
        "cheating",
    )
    assert void["match_sequence"] == 1
    got = {p["player_id"]: (p["rating_before"], p["rating_after"], p["delta"]) for p in void["players"]}
    assert got["bob"] == (before["bob"], None, None)  # bob's only match is gone
    for p in ("alice", "carol"):
        old, new = before[p], after[p]
        assert old is not None and new is not None and old != new
        assert got[p] == (old, new, new - old)
    assert "dave" not in got  # untouched by the void
    again = api.admin("/v1/admin/matches/v-1/void", {"reason": "twice"})
    assert again.status_code == 200 and len(_page(api)["items"]) == 4  # voiding again changes nothing


def test_switching_the_active_version_is_a_rerate_item(api: Api) -> None:
    """New rules, then back to version 1: two rerate items; an inactive re-rate adds none."""
    api.post(single("r-1"))
    toml = REFERENCE_RULES.replace(version="2.0", initial_rating=1500).to_toml()
    assert api.admin("/v1/admin/rules", {"rules_toml": toml, "label": "v2"}).status_code == 201
    assert api.admin("/v1/admin/rules", {"rules_toml": toml, "activate": False}).status_code == 201
    assert api.admin("/v1/admin/versions/1/activate", None).status_code == 200
    assert api.admin("/v1/admin/versions/1/activate", None).status_code == 200  # already active
    items = _page(api)["items"]
    rerates = [(i["kind"], i["version_id"], i["previous_version_id"]) for i in items[1:]]
    assert rerates == [("rerate", 2, 1), ("rerate", 1, 2)]
    assert items[1]["label"] == "v2"
    api.post(single("r-2"))
    assert _page(api)["items"][-1]["version_id"] == 1


def test_ndjson_streams_every_item_through_the_end(api: Api) -> None:
    """Accept: application/x-ndjson gives one JSON object per line, the same items as the pages."""
    for n in range(7):
        api.post(single(f"m-{n}", f"p{n}", f"q{n}"))
    api.admin("/v1/admin/matches/m-2/void", {"reason": ""})
    streamed = _all(api)
    paged = _page(api, limit=500)["items"]
    assert streamed == paged and [i["sequence"] for i in streamed] == list(range(1, 9))
    TypeAdapter(ChangesOut).validate_python({"items": streamed, "next_after": None, "poll_after": 8})
    limited = api.client.get("/v1/changes", params={"after": 3, "limit": 2}, headers=NDJSON)
    assert [json.loads(line)["sequence"] for line in limited.text.splitlines()] == [4, 5]


def test_an_empty_feed_streams_nothing_and_pages_nothing(api: Api) -> None:
    """No match yet: an empty NDJSON body and an empty page."""
    assert api.client.get("/v1/changes", headers=NDJSON).text == ""
    assert _page(api) == {"items": [], "next_after": None, "poll_after": 0}


def test_bad_cursor_or_limit_is_a_422_naming_the_field(api: Api) -> None:
    """after=-1, after=x, limit=0 and a JSON limit over 500 are refused, each naming its field."""
    for params, field in (({"after": -1}, "after"), ({"after": "x"}, "after"), ({"limit": 0}, "limit")):
        r = api.get("/v1/changes", **params)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", field]
    r = api.get("/v1/changes", limit=501)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "limit"]
    r = api.client.get("/v1/changes", params={"limit": 0}, headers=NDJSON)
    assert r.status_code == 422


def test_the_feed_route_is_documented_with_its_model(api: Api) -> None:
    """The OpenAPI document gives /v1/changes a JSON schema and the NDJSON media type."""
    doc = api.client.get("/openapi.json").json()
    content = doc["paths"]["/v1/changes"]["get"]["responses"]["200"]["content"]
    assert "application/x-ndjson" in content
    assert content["application/json"]["schema"]["$ref"].endswith("/ChangesOut")


def test_concurrent_writers_leave_dense_sequences_one_item_per_match(db_url: str) -> None:
    """Four threads with their own writer sessions: the feed has 1..N, each match once, all committed,
    and no batch failed on the way (the feed's lock, not a retry after a doubled sequence, orders them)."""
    ledger = Ledger(open_database(db_url))
    ledger.ensure_version()
    errors: list[int] = []

    def write(t: int) -> None:
        with ledger.writer_session() as session:
            for n in range(15):
                body = single(f"t{t}-{n}", f"a{t}-{n % 3}", f"b{t}-{n % 2}")
                session.apply([submission_from_payload(MatchIn.model_validate(body))])
            errors.append(session.take_errors())

    try:
        threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        assert errors == [0, 0, 0, 0]
        items = [json.loads(text) for text in ledger.stream_changes(0)]
        assert [i["sequence"] for i in items] == list(range(1, 61))
        assert sorted(i["match_id"] for i in items) == sorted(
            f"t{t}-{n}" for t in range(4) for n in range(15)
        )
        # Per player the feed follows the ledger: each before is the previous after.
        last: dict[str, int] = {}
        for item in items:
            for p in item["players"]:
                if p["player_id"] in last:
                    assert p["rating_before"] == last[p["player_id"]]
                last[p["player_id"]] = p["rating_after"]
    finally:
        ledger.db.dispose()
