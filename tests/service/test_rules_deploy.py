"""The tune -> deploy loop: tuned rule sets load into the service, which then rates as ``replay`` does."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import Api
from sedma_elo.batch.replay import replay
from sedma_elo.cli import app as cli_app
from sedma_elo.core.model import Match, PlayerStats
from sedma_elo.core.rules import REFERENCE_RULES, Rules, load_rules
from sedma_elo.errors import ValidationError
from sedma_elo.service import Ledger
from sedma_elo.service.ledger import bulk, rebuild
from sedma_elo.storage import open_database

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Every rule set `tune` wrote into docs/ (the plain one first): each must deploy.
TUNED = sorted(DOCS.glob("*tuned*rules.toml"), key=lambda p: p.name != "atp_tuned_rules.toml")
#: Valid rules whose re-rate the test makes fail midway (the engine keeps every rating of a valid
#: rule set in range, so a refusal is injected: see the test).
EXPLOSIVE = dataclasses.replace(REFERENCE_RULES, name="explosive")


def _matches(count: int, seed: int, prefix: str) -> list[Match]:
    """``count`` one-against-one matches among 8 players (many games each, so K by games matters)."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(8)]
    start = datetime(2026, 11, 1, tzinfo=UTC)
    out = []
    for i in range(count):
        a, b = rng.sample(names, 2)
        stats = [PlayerStats(rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 1), 0) for _ in "ab"]
        winner = rng.choice(["a", "b", "a", "b", "draw"])
        when = start + timedelta(minutes=i)
        out.append(Match.single(a, b, winner, *stats, match_id=f"{prefix}-{i}", played_at=when))  # type: ignore[arg-type]
    return out


def _body(match: Match) -> dict[str, Any]:
    a, b = match.team_a[0], match.team_b[0]
    assert match.played_at is not None
    return {
        "match_id": match.match_id,
        "played_at": match.played_at.isoformat(),
        "player_a": a,
        "player_b": b,
        "winner": match.winner,
        "stats": {"a": match.stats_of(a).to_dict(), "b": match.stats_of(b).to_dict()},
    }


def _post_all(api: Api, matches: list[Match]) -> None:
    for match in matches:
        r = api.post(_body(match))
        assert r.status_code == 201, r.text


def _served(api: Api, players: list[str]) -> dict[str, tuple[int, int]]:
    out = {}
    for pid in players:
        r = api.get(f"/v1/players/{pid}")
        assert r.status_code == 200, r.text
        out[pid] = (r.json()["rating"], r.json()["matches_played"])
    return out


def _replayed(matches: list[Match], rules: Rules) -> dict[str, tuple[int, int]]:
    result = replay(matches, rules, method="python")
    return {p: (result.ratings[p], result.matches_played[p]) for p in result.player_ids}


def test_a_refused_rules_upload_leaves_later_uploads_working(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a 422 for rules that cannot rate the ledger, the next upload is judged on its own rules."""
    _post_all(api, _matches(6, 1, "r"))
    monkeypatch.setattr(bulk, "CHUNK", 3)
    real_rate = rebuild.rate_chunk

    def refuse_midway(raw: Any, ph: str, rows: Any, rules: Rules, state: Any, *rest: Any) -> Any:
        # The re-rate's transaction has inserted its version row and written a chunk by now.
        if rules.name == "explosive" and int(state.games.sum()) >= 6:
            raise ValidationError("ratings", "refused midway by the test")
        return real_rate(raw, ph, rows, rules, state, *rest)

    monkeypatch.setattr(rebuild, "rate_chunk", refuse_midway)
    refused = api.admin("/v1/admin/rules", {"rules_toml": EXPLOSIVE.to_toml(), "label": "explosive"})
    assert refused.status_code == 422, refused.text
    good = api.admin("/v1/admin/rules", {"rules_toml": TUNED[0].read_text(), "label": "tuned"})
    assert good.status_code == 201, good.text
    assert good.json()["rules"] == load_rules(TUNED[0]).label
    versions = api.get("/v1/versions").json()["items"]
    assert [(v["label"], v["active"]) for v in versions][-1] == ("tuned", True)
    assert "explosive" not in {v["label"] for v in versions}


@pytest.mark.parametrize("rules_file", TUNED, ids=lambda p: p.stem)
def test_uploaded_tuned_rules_rate_as_replay_does(api: Api, rules_file: Path) -> None:
    """Matches before and after ``POST /v1/admin/rules`` end at the ratings ``replay --rules`` computes."""
    before, after = _matches(40, 2, "b"), _matches(40, 3, "a")
    _post_all(api, before)
    r = api.admin("/v1/admin/rules", {"rules_toml": rules_file.read_text()})
    assert r.status_code == 201, r.text
    _post_all(api, after)
    want = _replayed(before + after, load_rules(rules_file))
    assert _served(api, sorted(want)) == want
    ledger = Ledger(open_database(api.url))
    assert ledger.verify().ok
    ledger.db.dispose()


@pytest.mark.parametrize("rules_file", TUNED, ids=lambda p: p.stem)
def test_ratings_rerate_with_tuned_rules_then_serves_replay_ratings(db_url: str, rules_file: Path) -> None:
    """``ratings rerate`` of a tuned file, then the ledger's writes, equal a replay with those rules."""
    ledger = Ledger(open_database(db_url))
    ledger.ensure_version()
    before, after = _matches(30, 4, "b"), _matches(30, 5, "a")
    ledger.import_matches(before)
    result = CliRunner().invoke(cli_app, ["ratings", "rerate", str(rules_file), "--database-url", db_url])
    assert result.exit_code == 0, result.output
    assert ledger.active_version().rules == load_rules(rules_file)
    report = ledger.import_matches(after)
    assert report.created == len(after), report.refused
    want = _replayed(before + after, load_rules(rules_file))
    got = {p: (rec.rating, rec.matches_played) for p in want for rec in [ledger.get_player(p)]}
    assert got == want
    assert ledger.verify().ok
    ledger.db.dispose()
