"""The id rule over HTTP: ids in NFC, controls and format characters refused with the field named."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Api, single
from sedma_elo.core.ids import ID_PATTERN
from sedma_elo.service.payload import MatchIn


def _locs_and_messages(response: Any) -> tuple[list[object], str]:
    detail = response.json()["detail"]
    return [loc for err in detail for loc in err["loc"]], " ".join(err["msg"] for err in detail)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("player_a", "team/alice", "'/'"),
        ("player_b", "bob\u202e", "U+202E"),
        ("player_b", "bo\u2028b", "U+2028"),
        ("player_b", "bo\u0085b", "U+0085"),
        ("player_a", "al\u009bice", "U+009B"),
        ("player_a", "al\u200bice", "U+200B"),
        ("player_a", "\ufeffalice", "U+FEFF"),
        ("match_id", "m\u2066-1", "U+2066"),
    ],
)
def test_refused_character_answers_422_naming_field(api: Api, field: str, value: str, reason: str) -> None:
    """A control, format, bidi or separator character (or '/') in an id is a 422 naming the field."""
    r = api.post({**single("m-1"), field: value})
    assert r.status_code == 422
    locs, messages = _locs_and_messages(r)
    assert field in locs and reason in messages
    assert api.get("/v1/leaderboard").json()["items"] == []


def test_team_stats_key_follows_the_id_rule(api: Api) -> None:
    """A stats key of a team match is an id too: a bidi override in it is refused."""
    body = {
        "match_id": "t-1",
        "team_a": ["a1", "a2"],
        "team_b": ["b1", "b2"],
        "winner": "a",
        "stats": {"a1\u202e": {"won_by_16": 1}},
    }
    r = api.post(body)
    assert r.status_code == 422
    locs, messages = _locs_and_messages(r)
    assert "stats" in locs and "U+202E" in messages


def test_nfd_and_nfc_spellings_are_one_player(api: Api) -> None:
    """'José' posted decomposed, then precomposed, is one player with two matches (no self-match)."""
    assert api.post(single("m-1", a="Jose\u0301", b="bob")).status_code == 201
    assert api.post(single("m-2", a="Jos\u00e9", b="carol")).status_code == 201
    player = api.get("/v1/players/Jos\u00e9").json()
    assert player["matches_played"] == 2
    refused = api.post(single("m-3", a="Jos\u00e9", b="Jose\u0301"))
    assert refused.status_code == 422


def test_match_id_is_normalised_so_a_respelling_is_a_repeat(api: Api) -> None:
    """The NFD and NFC spellings of a match id are the same match: the second post is a repeat."""
    assert api.post(single("r\u00e9-1")).status_code == 201
    again = api.post(single("re\u0301-1"))
    assert again.status_code == 200


@pytest.mark.parametrize("played_at", ["0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-14:00"])
def test_time_without_a_utc_equivalent_answers_422(api: Api, played_at: str) -> None:
    """A time whose UTC equivalent is outside years 1..9999 is a 422 naming played_at, not a 500."""
    r = api.post({**single("m-1"), "played_at": played_at})
    assert r.status_code == 422
    assert "played_at" in _locs_and_messages(r)[0]


def test_search_prefix_with_a_c1_control_answers_422(api: Api) -> None:
    """The player search's prefix follows the id rule's characters (a C1 control is refused)."""
    r = api.get("/v1/players", prefix="ali\u0085")
    assert r.status_code == 422
    assert "prefix" in _locs_and_messages(r)[0]


def test_schema_documents_the_rule_as_a_pattern() -> None:
    """The OpenAPI schema of an id carries ID_PATTERN, so clients and fuzzers see the same rule."""
    schema = MatchIn.model_json_schema()
    player_a = next(s for s in schema["properties"]["player_a"]["anyOf"] if s.get("type") == "string")
    assert player_a["pattern"] == ID_PATTERN and player_a["maxLength"] == 128


_NFC = "Jos\u00e9"
_NFD = "Jose\u0301"


@pytest.mark.parametrize(
    "path",
    [
        "/v1/players/{}",
        "/v1/players/{}/history",
        "/v1/leaderboard/around/{}",
        "/v1/recent-changes?players={}",
    ],
)
def test_a_path_id_in_nfd_finds_the_player_stored_in_nfc(api: Api, path: str) -> None:
    """``José`` sent as e + combining acute in the URL reads the same player as the NFC form."""
    assert api.post(single("nfc-1", a=_NFC, b="bob")).status_code == 201
    nfc = api.client.get(path.format(_NFC))
    nfd = api.client.get(path.format(_NFD))
    assert nfc.status_code == 200, nfc.text
    assert (nfd.status_code, nfd.json()) == (200, nfc.json())


def test_a_match_id_in_nfd_in_the_path_finds_the_match(api: Api) -> None:
    """GET /v1/matches/{id} normalises the id as POST did."""
    assert api.post(single(f"m-{_NFC}")).status_code == 201
    r = api.client.get(f"/v1/matches/m-{_NFD}")
    assert r.status_code == 200, r.text
    assert r.json()["match_id"] == f"m-{_NFC}"


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/v1/players/bo\u0085b", "player_id"),
        ("/v1/players/al\u202eice/history", "player_id"),
        ("/v1/leaderboard/around/\ufeffann", "player_id"),
        ("/v1/matches/m\u200b1", "match_id"),
    ],
)
def test_a_refused_character_in_a_path_id_answers_422_naming_it(api: Api, path: str, name: str) -> None:
    """A control, format or bidi character in a path id is a 422 whose loc is ``path.<name>``."""
    r = api.client.get(path)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["path", name]


def test_the_player_page_normalises_its_id(api: Api) -> None:
    """/players/José in NFD shows the NFC player; a refused character answers 422, not 404 or 500."""
    assert api.post(single("nfc-2", a=_NFC, b="bob")).status_code == 201
    assert api.client.get(f"/players/{_NFD}").status_code == 200
    assert api.client.get("/players/bo\u202eb").status_code == 422
