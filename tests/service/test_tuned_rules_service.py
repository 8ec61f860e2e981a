"""The tuned rule sets in docs/ deployed to the service serve exactly what replay computes."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Api, single
from sedma_elo import Match, PlayerStats, load_rules
from sedma_elo.batch.replay import replay

DOCS = Path(__file__).resolve().parents[2] / "docs"
TUNED = [DOCS / "atp_tuned_rules.toml", DOCS / "atp_tuned_zero_sum_rules.toml"]
PAIRS = [("alice", "bob", "a"), ("bob", "cyd", "b"), ("cyd", "alice", "draw"), ("alice", "bob", "b")]


def _post_all(api: Api, start: int, stop: int) -> None:
    for i in range(start, stop):
        a, b, winner = PAIRS[i]
        body = single(f"t-{i}", a, b, winner) | {"stats": {"a": {"won_by_16": i % 2}, "b": {"bad_moves": 1}}}
        r = api.post(body)
        assert r.status_code in (200, 201), r.text


def _expected(path: Path) -> dict[str, int]:
    matches = [
        Match.single(a, b, w, PlayerStats(won_by_16=i % 2), PlayerStats(bad_moves=1))  # type: ignore[arg-type]
        for i, (a, b, w) in enumerate(PAIRS)
    ]
    return replay(matches, load_rules(path), method="kernel").ratings


@pytest.mark.parametrize("path", TUNED, ids=lambda p: p.name)
def test_matches_posted_under_tuned_rules_equal_replay(api: Api, path: Path) -> None:
    """Rules uploaded before and between posts (a re-rate) leave the ratings replay --rules computes."""
    _post_all(api, 0, 2)
    r = api.admin("/v1/admin/rules", {"rules_toml": path.read_text(encoding="utf-8")})
    assert r.status_code == 201, r.text
    _post_all(api, 2, len(PAIRS))
    served = {p: api.get(f"/v1/players/{p}").json()["rating"] for p in ("alice", "bob", "cyd")}
    assert served == _expected(path)
