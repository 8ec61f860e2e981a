"""The read cache: kept answers equal fresh ones; a change is seen at once here, in bounded time elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Api, make_api, single
from sedma_elo.service.api import read_cache

PATHS = [
    "/v1/leaderboard",
    "/v1/leaderboard?limit=1",
    "/v1/players/alice",
    "/v1/players/carol",
    "/v1/players/nobody",
    "/v1/leaderboard?limit=0",
]


def _answers(api: Api) -> list[tuple[int, str]]:
    return [(r.status_code, r.text) for r in (api.client.get(p) for p in PATHS)]


def _seeded(api: Api) -> Api:
    for i, (a, b) in enumerate([("alice", "bob"), ("carol", "alice"), ("bob", "carol")]):
        assert api.post(single(f"s-{i}", a, b)).status_code == 201
    return api


@pytest.fixture
def cached(db_url: str) -> Iterator[Api]:
    """The app on an empty database of each kind, its read cache on (the default)."""
    yield from make_api(db_url)


def test_kept_answers_equal_the_answers_without_cache(tmp_path: Any) -> None:
    """Leaderboard pages, players, an unknown player and a bad limit: the same status and body, twice."""
    runs = []
    for size in (0, 50_000):
        for api in make_api(f"sqlite:///{tmp_path}/{size}.db", read_cache_size=size):
            _seeded(api)
            runs.append((_answers(api), _answers(api)))
    (plain, plain_again), (first, kept) = runs
    assert plain == plain_again == first == kept
    assert [status for status, _ in kept] == [200, 200, 200, 200, 404, 422]


def test_a_match_written_here_is_read_at_once(cached: Api) -> None:
    """A kept player and leaderboard answer are replaced as soon as a new match is answered."""
    _seeded(cached)
    before = cached.get("/v1/players/alice").json()
    board = cached.get("/v1/leaderboard").json()
    assert cached.get("/v1/players/alice").json() == before  # now kept
    assert cached.post(single("s-new", "alice", "bob")).status_code == 201
    after = cached.get("/v1/players/alice").json()
    assert after["matches_played"] == before["matches_played"] + 1
    assert cached.get("/v1/leaderboard").json() != board


def test_a_void_here_is_read_at_once(cached: Api) -> None:
    """Voiding a match through the admin route drops the kept answers it changes."""
    _seeded(cached)
    before = cached.get("/v1/players/carol").json()
    assert cached.admin("/v1/admin/matches/s-2/void", {"reason": "test"}).status_code == 200
    assert cached.get("/v1/players/carol").json()["matches_played"] == before["matches_played"] - 1


def test_if_none_match_gets_304_without_a_body(cached: Api) -> None:
    """The ETag of an answer brings a 304 (same tag, no body); another tag gets the answer."""
    _seeded(cached)
    first = cached.get("/v1/players/alice")
    tag = first.headers["etag"]
    again = cached.client.get("/v1/players/alice", headers={"If-None-Match": tag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag)
    other = cached.client.get("/v1/players/alice", headers={"If-None-Match": '"other"'})
    assert (other.status_code, other.json()) == (200, first.json())


def test_a_kept_answer_has_its_own_request_id(cached: Api) -> None:
    """Answers served from the cache are observed: each carries a request id of its own."""
    _seeded(cached)
    ids = {cached.get("/v1/leaderboard").headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3


def test_at_most_size_answers_are_kept(tmp_path: Any) -> None:
    """With room for two answers, reading three players keeps two."""
    for api in make_api(f"sqlite:///{tmp_path}/l.db", read_cache_size=2):
        _seeded(api)
        for player in ("alice", "bob", "carol"):
            assert api.get(f"/v1/players/{player}").status_code == 200
        app: Any = api.client.app
        assert len(app.cached._answers) == 2


def test_another_process_change_is_seen_within_read_cache_seconds(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second app on the same ledger (another process) writes: seen once the bound has passed."""
    url = f"sqlite:///{tmp_path}/shared.db"
    clock = [1000.0]
    monkeypatch.setattr(read_cache.time, "monotonic", lambda: clock[0])
    for reader in make_api(url, read_cache_seconds=5):
        _seeded(reader)
        kept = reader.get("/v1/players/alice").json()
        for writer in make_api(url):
            assert writer.post(single("s-other", "alice", "bob")).status_code == 201
        clock[0] += 4.9
        assert reader.get("/v1/players/alice").json() == kept  # within the bound: may be the old answer
        clock[0] += 0.2
        assert reader.get("/v1/players/alice").json()["matches_played"] == kept["matches_played"] + 1


def test_with_zero_seconds_another_process_change_is_seen_at_once(tmp_path: Any) -> None:
    """``read_cache_seconds=0`` reads the head on every request: no answer older than the last commit."""
    url = f"sqlite:///{tmp_path}/shared.db"
    for reader in make_api(url, read_cache_seconds=0):
        _seeded(reader)
        kept = reader.get("/v1/players/alice").json()
        for writer in make_api(url):
            assert writer.post(single("s-other", "alice", "bob")).status_code == 201
        assert reader.get("/v1/players/alice").json()["matches_played"] == kept["matches_played"] + 1


def test_a_match_drops_only_the_answers_it_can_change(cached: Api) -> None:
    """A draw of two new players keeps the top page and the others' answers; theirs are dropped."""
    assert cached.post(single("s-0", "ann", "ben")).status_code == 201
    paths = ["/v1/leaderboard?limit=1", "/v1/players/ann", "/v1/players/ben", "/v1/leaderboard"]
    for path in paths:
        assert cached.client.get(path).status_code == 200
    assert cached.post(single("s-1", "cat", "dan", "draw")).status_code == 201
    assert cached.client.get("/v1/players/ben").status_code == 200  # reads the new head: drops what moved
    app: Any = cached.client.app
    kept = {(p.split("?")[0], p.split("?")[1].encode() if "?" in p else b"") for p in paths}
    assert {k for k in kept if app.cached._answers.get(k) is not None} == {
        ("/v1/leaderboard", b"limit=1"),
        ("/v1/players/ann", b""),
        ("/v1/players/ben", b""),  # not in the match either
    }


def test_a_player_miss_read_without_fastapi_answers_as_the_route(tmp_path: Any) -> None:
    """The cache's own read of a player: the route's status, body and headers (besides ETag, id)."""
    answers = []
    for size in (0, 50_000):
        for api in make_api(f"sqlite:///{tmp_path}/{size}.db", read_cache_size=size):
            _seeded(api)
            r = api.client.get("/v1/players/alice")
            headers = {k: v for k, v in r.headers.items() if k not in ("etag", "x-request-id")}
            answers.append((r.status_code, r.content, headers))
    assert answers[0] == answers[1]


def test_a_player_id_in_another_normal_form_is_found_through_the_route(cached: Api) -> None:
    """``/v1/players/Jose\u0301`` (NFD) finds the player stored as NFC: the route normalises it."""
    assert cached.post(single("s-0", "Jos\u00e9", "bob")).status_code == 201
    nfd = cached.client.get("/v1/players/Jose\u0301")
    assert (nfd.status_code, nfd.json()["player_id"]) == (200, "Jos\u00e9")
