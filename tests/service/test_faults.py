"""Hostile input and faults get clear answers (issue 12): never a 500, never a dead writer."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Api, make_api, single
from sedma_elo.core.model import Match
from sedma_elo.errors import UnavailableError
from sedma_elo.service import GroupWriter, Ledger
from sedma_elo.service.payload import submission_from_match
from sedma_elo.storage import open_database


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-14:00"])
def test_played_at_outside_the_utc_years_answers_422(api: Api, when: str) -> None:
    """A time that leaves years 1..9999 once moved to UTC is refused naming ``played_at``."""
    r = api.post(single("t-1") | {"played_at": when})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "played_at"]


def _cursor(parts: list[object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


@pytest.mark.parametrize("player", ["\ud800", "a\u0000b", "x" * 129])
def test_a_forged_leaderboard_cursor_answers_422(api: Api, player: str) -> None:
    """A cursor holding a lone surrogate, a NUL or an overlong id is refused on the API and the page."""
    assert api.post(single("c-1")).status_code == 201
    cursor = _cursor([1000, player, 1])
    r = api.get("/v1/leaderboard", cursor=cursor)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["query", "cursor"]
    assert api.get("/", cursor=cursor).status_code == 400


def test_a_cancelled_queued_write_leaves_the_writer_serving(tmp_path: object) -> None:
    """A submission cancelled while queued is dropped; the writer thread goes on with later ones."""
    ledger = Ledger(open_database(f"sqlite:///{tmp_path}/ledger.db"))
    ledger.ensure_version()
    writer = GroupWriter(ledger)
    first = writer.submit_nowait(submission_from_match(Match.single("ann", "bob", "a", match_id="x-1")))
    assert first.cancel()  # the writer has not started: the future is still pending
    writer.start()
    later = writer.submit_nowait(submission_from_match(Match.single("ann", "bob", "b", match_id="x-2")))
    try:
        assert later.result(timeout=30).status == "created"
        assert [m.match_id for _, m in ledger.ledger()] == ["x-2"]
    finally:
        writer.stop()
        ledger.db.dispose()


def test_reposting_a_voided_match_answers_that_it_is_voided(api: Api) -> None:
    """The repeat of a voided match gets 200 with ``voided: true`` and no changes, as GET shows it."""
    body = single("v-1")
    assert api.post(body).status_code == 201
    assert api.admin("/v1/admin/matches/v-1/void", {"reason": "entered twice"}).status_code == 200
    again = api.post(body)
    assert again.status_code == 200
    assert again.json()["voided"] is True
    assert again.json()["void_reason"] == "entered twice"
    assert again.json()["changes"] == []
    assert again.json() == api.get("/v1/matches/v-1").json()


@pytest.mark.faults
def test_a_stalled_writer_answers_503_with_retry_after_then_the_repeat_lands(tmp_path: object) -> None:
    """Write lock held past ``write_timeout``: 503 + Retry-After (JSON); once free, the repeat lands."""
    for api in make_api(f"sqlite:///{tmp_path}/ledger.db", write_timeout=0.5):
        lock = api.client.app.state.services.db.write_lock  # type: ignore[attr-defined]
        with lock:
            stalled = api.post(single("s-1"))
        assert stalled.status_code == 503, stalled.text
        assert int(stalled.headers["retry-after"]) >= 1
        assert "detail" in stalled.json()
        again = api.post(single("s-1"))
        assert again.status_code in (200, 201), again.text
        assert api.get("/v1/matches/s-1").status_code == 200
        ledger: Any = api.client.app.state.ledger  # type: ignore[attr-defined]
        assert [m.match_id for _, m in ledger.ledger()] == ["s-1"]  # applied once
        assert ledger.verify().ok


def test_a_full_write_queue_refuses_at_once(tmp_path: object) -> None:
    """Beyond ``max_queue`` waiting submissions, submitting raises UnavailableError instead of queueing."""
    ledger = Ledger(open_database(f"sqlite:///{tmp_path}/ledger.db"))
    ledger.ensure_version()
    writer = GroupWriter(ledger, max_queue=1)
    subs = [submission_from_match(Match.single("ann", "bob", "a", match_id=f"q-{i}")) for i in range(2)]
    first = writer.submit_nowait(subs[0])  # the writer is not started: it stays queued
    with pytest.raises(UnavailableError):
        writer.submit_nowait(subs[1])
    writer.start()
    try:
        assert first.result(timeout=30).status == "created"
    finally:
        writer.stop()
        ledger.db.dispose()


def _raw_post(api: Api, path: str, content: bytes | Iterator[bytes], content_type: str, key: str) -> Any:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": content_type}
    return api.client.post(path, content=content, headers=headers)


def test_a_repeated_json_key_answers_422_naming_it(api: Api) -> None:
    """``{"winner": "a", ..., "winner": "b"}`` is refused on the write and the admin routes alike."""
    text = json.dumps(single("k-1"))[:-1] + ', "winner": "b"}'
    r = _raw_post(api, "/v1/matches", text.encode(), "application/json", api.write_key)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "winner"]
    void = b'{"reason": "x", "reason": "y"}'
    r = _raw_post(api, "/v1/admin/matches/k-1/void", void, "application/json", api.admin_key)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "reason"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_declared_json_answers_415(api: Api, content_type: str) -> None:
    """A JSON text sent as plain text or a form is refused with 415 (JSON body), not taken as JSON."""
    body = json.dumps(single("ct-1")).encode()
    r = _raw_post(api, "/v1/matches", body, content_type, api.write_key)
    assert r.status_code == 415, r.text
    assert "detail" in r.json()
    r = _raw_post(api, "/v1/admin/rules", b'{"rules_toml": ""}', content_type, api.admin_key)
    assert r.status_code == 415, r.text
    assert api.get("/v1/matches/ct-1").status_code == 404


@pytest.mark.parametrize("path", ["/v1/admin/matches/m-1/void", "/v1/admin/rules"])
def test_an_oversized_chunked_body_answers_413(api: Api, path: str) -> None:
    """A chunked body past the route's limit gets 413 (JSON), not a 400 "error parsing the body"."""

    def chunks() -> Iterator[bytes]:
        yield b'{"reason": "'
        for _ in range(200):
            yield b"x" * 1000  # 200 KB: past the general limit and the rules route's larger one
        yield b'"}'

    r = _raw_post(api, path, chunks(), "application/json", api.admin_key)
    assert r.status_code == 413, r.text
    assert "detail" in r.json()


def test_the_longest_rules_text_allowed_fits_the_rules_route_body_limit(api: Api) -> None:
    """A 20,000-character rules text passes the body limit and is judged as TOML (422), not as size."""
    text = "# " + "é" * 19_980 + "\nname = 1\n"
    assert len(text) <= 20_000
    r = api.admin("/v1/admin/rules", {"rules_toml": text})
    assert r.status_code == 422, r.text


@pytest.mark.parametrize("path", ["/v1/admin/keys", "/v1/admin/rules"])
def test_a_body_that_is_not_utf8_answers_422_on_the_admin_routes(api: Api, path: str) -> None:
    """Bytes that are not UTF-8 get 422 naming the body (FastAPI answered an undocumented 400)."""
    r = _raw_post(api, path, b"\xff\xfe{", "application/json", api.admin_key)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body"]


@pytest.mark.parametrize("activate", [0, 1, "true"])
def test_rules_activate_must_be_a_json_boolean(api: Api, activate: object) -> None:
    """``activate: 0`` is refused (422 naming it), not read as false; no version is added."""
    before = api.get("/v1/versions").json()
    r = api.admin("/v1/admin/rules", {"rules_toml": "", "activate": activate})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][-1] == "activate"
    assert api.get("/v1/versions").json() == before


def test_a_405_names_every_method_of_the_path_in_allow(api: Api) -> None:
    """/v1/admin/keys serves GET and POST: a PUT is 405 with ``Allow: GET, POST`` and a JSON body."""
    r = api.client.put("/v1/admin/keys", headers=api.headers(api.admin_key))
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, POST"
    assert "detail" in r.json()
