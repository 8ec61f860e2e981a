"""Ledger.player_career: the history's items with each match's sides and ratings before, in one read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sedma_elo.core.model import Match
from sedma_elo.errors import NotFoundError
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database

START = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _matches() -> list[Match]:
    out = []
    for i in range(40):
        when = START + timedelta(hours=i)
        if i % 5 == 4:
            out.append(Match(("ann", "bob"), ("cy", "dee"), "draw" if i % 2 else "b", {}, f"t-{i}", when))
        else:
            out.append(
                Match.single(
                    "ann", ("bob", "cy", "dee")[i % 3], "ab"[i % 2], match_id=f"s-{i}", played_at=when
                )
            )
    return out


def test_career_is_the_history_with_sides_and_ratings_before(db_url: str) -> None:
    """Same items as player_history; sides, winner and every rating before as get_match reports them."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        ledger.import_matches(_matches())
        ledger.void("s-7", "typo")
        career = ledger.player_career("ann")
        history = ledger.player_history("ann", limit=500).items
        assert [(c.sequence, c.match_id, c.rating_before, c.rating_after) for c in career] == [
            (h["sequence"], h["match_id"], h["rating_before"], h["rating_after"]) for h in history
        ]
        assert "s-7" not in {c.match_id for c in career}
        assert [c.played_at for c in career] == [datetime.fromisoformat(h["played_at"]) for h in history]
        for c in career:
            shown = ledger.get_match(c.match_id)
            body = shown["match"]
            sides = (
                ((body["player_a"],), (body["player_b"],))
                if "player_a" in body
                else (tuple(body["team_a"]), tuple(body["team_b"]))
            )
            assert (c.team_a, c.team_b, c.winner) == (*sides, body["winner"])
            before = {ch["player_id"]: ch["rating_before"] for ch in shown["changes"]}
            slots = zip(
                (c.a1, c.a2, c.b1, c.b2), (c.before_a1, c.before_a2, c.before_b1, c.before_b2), strict=True
            )
            assert {p: r for p, r in slots if p is not None} == before
    finally:
        ledger.db.dispose()


def test_career_of_an_unknown_player_is_not_found(db_url: str) -> None:
    """A player without a rated match: NotFoundError, as player_history."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        with pytest.raises(NotFoundError):
            ledger.player_career("nobody")
    finally:
        ledger.db.dispose()
