"""The synthetic league of benchmarks/make_league.py: heavy-tailed, with draws and teams, deterministic."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from sedma_elo.batch.history import read_matches

from .script import load_script


@pytest.fixture(scope="module")
def maker() -> ModuleType:
    """The script, loaded from its file."""
    return load_script("make_league")


@pytest.fixture(scope="module")
def league(maker: ModuleType) -> list[dict[str, Any]]:
    """10,000 matches among 2,000 players, parsed."""
    return [json.loads(line) for line in maker.generate(10_000, 2_000, seed=7)]


def _seats(match: dict[str, Any]) -> list[str]:
    if "player_a" in match:
        return [match["player_a"], match["player_b"]]
    return [*match["team_a"], *match["team_b"]]


def test_same_seed_same_league_other_seed_another(maker: ModuleType) -> None:
    """The league is a function of its seed."""
    first = list(maker.generate(2_000, 300, seed=3))
    assert first == list(maker.generate(2_000, 300, seed=3))
    assert first != list(maker.generate(2_000, 300, seed=4))


def test_activity_is_heavy_tailed(league: list[dict[str, Any]]) -> None:
    """The busiest 1% of players take over a tenth of the seats; the median player few."""
    counts = Counter(p for m in league for p in _seats(m))
    ranked = sorted(counts.values(), reverse=True)
    seats = sum(ranked)
    top = ranked[: len(ranked) // 100]
    assert sum(top) > 0.10 * seats  # 10 times a uniform league's share
    assert ranked[0] > 20 * ranked[len(ranked) // 2]


def test_no_player_takes_more_than_busiest_times_the_average(maker: ModuleType) -> None:
    """Each player's seat probability is capped at ``busiest`` average players, and some reach it."""
    for players, busiest in ((1_000, 5.0), (200_000, 1000.0)):
        p = maker._activity(np.random.default_rng(1), players, 1.2, busiest)
        assert p.sum() == pytest.approx(1.0)
        assert p.max() <= busiest / players * (1 + 1e-9)
        assert (p >= busiest / players * (1 - 1e-9)).sum() >= 1


def test_capped_league_seats_follow_the_cap(maker: ModuleType) -> None:
    """With ``busiest=20`` among 2,000 players nobody sits in more than about 1% of the seats."""
    league = [json.loads(line) for line in maker.generate(20_000, 2_000, seed=7, busiest=20.0)]
    counts = Counter(p for m in league for p in _seats(m))
    seats = sum(counts.values())
    # The cap's share is 20 / 2,000 = 1% of the seats; the slack covers sampling (about 5 sd).
    assert max(counts.values()) <= 0.01 * seats * 1.25


def test_busiest_below_the_average_player_is_refused(maker: ModuleType) -> None:
    """A cap under the average player's share has no league: ValueError."""
    with pytest.raises(ValueError, match="busiest"):
        maker._activity(np.random.default_rng(1), 100, 1.2, 0.5)


def test_draws_and_team_matches_are_present(league: list[dict[str, Any]]) -> None:
    """About 3% draws and 5% two-against-two matches (the defaults)."""
    draws = sum(m["winner"] == "draw" for m in league) / len(league)
    teams = sum("team_a" in m for m in league) / len(league)
    assert 0.015 < draws < 0.05
    assert 0.03 < teams < 0.075


def test_matches_are_in_time_order_with_distinct_seats(league: list[dict[str, Any]]) -> None:
    """Times never go back, ids are unique, nobody sits twice in one match."""
    times = [m["played_at"] for m in league]
    assert times == sorted(times)
    assert len({m["match_id"] for m in league}) == len(league)
    assert all(len(set(_seats(m))) == len(_seats(m)) for m in league)


def test_written_file_reads_back_through_the_history_reader(maker: ModuleType, tmp_path: Path) -> None:
    """The gzipped file is a history every command reads: as many matches as asked, none refused."""
    out = tmp_path / "league.jsonl.gz"
    assert maker.main([str(out), "--matches", "3000", "--players", "500", "--seed", "2"]) == 0
    matches, errors = read_matches(out)
    assert (len(matches), errors) == (3000, [])
    assert any(len(m.team_a) == 2 for m in matches) and any(m.winner == "draw" for m in matches)
