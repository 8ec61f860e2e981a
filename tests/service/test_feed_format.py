"""The change feed's stored form: compact ``match`` events, read back as the documented items."""

from __future__ import annotations

import json

from sqlalchemy import text

from conftest import Api, single
from sedma_elo.service.ledger.feed_events import item_text, match_event, match_player
from sedma_elo.storage import open_database

_WHEN = "2026-12-01T20:28:15.123456Z"


def _item(data: str, sequence: int = 7) -> str:
    return item_text(sequence, data)


def test_a_compact_match_event_reads_as_the_documented_item() -> None:
    """A stored team match event expands to the item's object, key by key and in the documented order."""
    players = [
        match_player(p, 1500, after) for p, after in (("a", 1510), ("b", 1508), ("c", 1492), ("d", 1490))
    ]
    _, _, data, _ = match_event(3, "m-1", 41, "2026-11-29T12:00:00Z", players, _WHEN)
    want = {
        "sequence": 7,
        "kind": "match",
        "version_id": 3,
        "match_id": "m-1",
        "match_sequence": 41,
        "played_at": "2026-11-29T12:00:00Z",
        "players": [
            {"player_id": "a", "rating_before": 1500, "rating_after": 1510, "delta": 10},
            {"player_id": "b", "rating_before": 1500, "rating_after": 1508, "delta": 8},
            {"player_id": "c", "rating_before": 1500, "rating_after": 1492, "delta": -8},
            {"player_id": "d", "rating_before": 1500, "rating_after": 1490, "delta": -10},
        ],
        "created_at": _WHEN,
    }
    assert _item(data) == json.dumps(want, ensure_ascii=False, separators=(",", ":"))


def test_ids_with_json_punctuation_and_no_played_at_survive_the_compact_form() -> None:
    """Quotes, brackets, commas and non-ASCII in the ids, and a null played_at, come back unchanged."""
    odd_a, odd_b, odd_match = 'x",["y', "ž],[1,2]", 'm"1,]'
    players = [match_player(odd_a, 1500, 1516), match_player(odd_b, 1500, 1484)]
    _, _, data, _ = match_event(1, odd_match, 2, None, players, _WHEN)
    item = json.loads(_item(data))
    assert (item["match_id"], item["played_at"]) == (odd_match, None)
    assert [p["player_id"] for p in item["players"]] == [odd_a, odd_b]
    assert "ž" in _item(data)  # kept, not escaped, as the rest of the service's JSON


def test_the_stored_match_event_is_under_half_its_item() -> None:
    """A one-against-one match event is stored in less than half the item's text."""
    players = [match_player("p123456", 1500, 1516), match_player("p654321", 1500, 1484)]
    _, _, data, _ = match_event(1, "lg00001234567", 1234567, "2015-03-02T10:00:00Z", players, _WHEN)
    assert len(data) < len(_item(data)) / 2


def test_an_item_stored_as_an_object_is_served_as_it_is(api: Api) -> None:
    """A feed row stored as an object (the form before the compact one) is served unchanged."""
    api.post(single("m-1", "alice", "bob"))
    old = (
        '{"kind":"match","version_id":1,"match_id":"old","match_sequence":9,"played_at":null,'
        '"players":[{"player_id":"zed","rating_before":1500,"rating_after":1501,"delta":1}],'
        f'"created_at":"{_WHEN}"}}'
    )
    db = open_database(api.url)
    try:
        with db.write.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO change_events (sequence, kind, version_id, data, created_at)"
                    " VALUES (2, 'match', 1, :data, :when)"
                ),
                {"data": old, "when": _WHEN},
            )
    finally:
        db.dispose()
    items = api.get("/v1/changes").json()["items"]
    assert items[1] == {"sequence": 2, **json.loads(old)}
    assert [(i["sequence"], i["match_id"]) for i in items] == [(1, "m-1"), (2, "old")]
