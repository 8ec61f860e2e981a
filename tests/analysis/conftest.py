"""Small synthetic histories for the analysis tests (a hidden skill per player, Elo-logistic results)."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from sedma_elo.core.model import Match, PlayerStats


def synthetic_matches(
    n_players: int = 30, n_matches: int = 600, seed: int = 1, draws: float = 0.0
) -> list[Match]:
    """Matches between random pairs; side a wins with the Elo probability of their hidden skills."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 200.0, n_players)
    start = datetime(2020, 1, 1)
    out = []
    for i in range(n_matches):
        a, b = rng.choice(n_players, 2, replace=False)
        p = 1.0 / (1.0 + 10.0 ** ((skill[b] - skill[a]) / 400.0))
        u = rng.random()
        winner = "draw" if u < draws else ("a" if rng.random() < p else "b")
        stats = PlayerStats(won_by_16=int(rng.integers(0, 3)), bad_moves=int(rng.integers(0, 4)))
        out.append(
            Match.single(
                f"p{a}",
                f"p{b}",
                winner,
                stats,
                PlayerStats(),
                match_id=f"m{i}",
                played_at=start + timedelta(hours=6 * i),
            )
        )
    return out


@pytest.fixture(scope="session")
def small_history() -> list[Match]:
    """600 matches among 30 players over 150 days."""
    return synthetic_matches()
