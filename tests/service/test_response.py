"""The stored first answer to a match post: its text, built piecewise on the write path for speed."""

from __future__ import annotations

import json
import sys

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from sedma_elo.engine import RatingResult, rate
from sedma_elo.model import PlayerStats
from sedma_elo.rules import REFERENCE_RULES
from sedma_elo.service import ServiceSettings, create_app
from sedma_elo.service.ledger import Ledger, VersionInfo
from sedma_elo.service.payload import MatchIn, submission_from_payload

VERSION = VersionInfo(3, "reference \u00e9dition", REFERENCE_RULES, True, "2026-11-29T12:00:00Z")
IDS = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="/"), min_size=1, max_size=100
).map(lambda s: f"p{s.strip()}")
COUNTS = st.builds(
    PlayerStats,
    st.integers(0, 1_000_000),
    st.integers(0, 12),
    st.integers(0, 12),
    st.integers(0, 12),
)


def _plain_text(sub_body: str, seq: int, played_at: str | None, result: RatingResult) -> str:
    """The answer as json.dumps of :meth:`Ledger.match_view` (the form GET /v1/matches/{id} serves)."""
    view = Ledger.match_view(json.loads(sub_body), seq, played_at, VERSION, result, False, None)
    return json.dumps(view, separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=150, deadline=None)
@given(
    ids=st.lists(IDS, min_size=4, max_size=4, unique=True),
    team=st.booleans(),
    winner=st.sampled_from(["a", "b", "draw"]),
    stats=st.lists(COUNTS, min_size=4, max_size=4),
    ratings=st.lists(st.integers(100, 3000), min_size=4, max_size=4),
    seq=st.integers(1, 2**40),
)
def test_response_text_equals_plain_json_of_the_match_view(
    ids: list[str], team: bool, winner: str, stats: list[PlayerStats], ratings: list[int], seq: int
) -> None:
    """The piecewise answer text is byte for byte json.dumps of the match view, for 1v1 and 2v2."""
    players = {"team_a": ids[:2], "team_b": ids[2:]} if team else {"player_a": ids[0], "player_b": ids[1]}
    keys = ids if team else ["a", "b"]
    payload = {
        "match_id": "m-1",
        "played_at": "2026-11-29T13:00:00+01:00",
        "winner": winner,
        **players,
        "stats": {key: s.to_dict() for key, s in zip(keys, stats, strict=False)},
    }
    sub = submission_from_payload(MatchIn.model_validate(payload))
    result = rate(sub.match, dict(zip(ids, ratings, strict=True)), REFERENCE_RULES)
    for _ in range(2):  # the second time the score texts come from the cache
        assert Ledger._response_text(sub, seq, VERSION, result) == _plain_text(
            sub.body, seq, sub.played_at, result
        )


def test_switch_interval_is_restored_when_the_app_stops(tmp_path: object) -> None:
    """The app lowers the GIL switch interval while it runs and puts the old one back on shutdown."""
    before = sys.getswitchinterval()
    app = create_app(ServiceSettings(database_url=f"sqlite:///{tmp_path}/ledger.db", rate_limit=0))
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        assert sys.getswitchinterval() < before
    assert sys.getswitchinterval() == before
