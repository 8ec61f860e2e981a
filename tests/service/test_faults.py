"""Hostile input and faults get clear answers (issue 12): never a 500, never a dead writer."""

from __future__ import annotations

import base64
import json

import pytest

from conftest import Api, single
from sedma_elo.core.model import Match
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
