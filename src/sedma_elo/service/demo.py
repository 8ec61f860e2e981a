"""A small, reproducible demo history for ``sedma-elo serve --demo`` when no sample file is bundled."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..core.model import Match, PlayerStats, Winner

__all__ = ["bundled_sample", "demo_matches"]

_NAMES = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
    "olivia",
    "peggy",
    "rupert",
    "sybil",
    "trent",
    "uma",
    "victor",
    "wendy",
]


def demo_matches(count: int = 300, seed: int = 7) -> list[Match]:
    """``count`` one-against-one matches among 20 players, one every 20 minutes from 2026-11-01."""
    rng = random.Random(seed)
    strength = {name: rng.gauss(0.0, 1.0) for name in _NAMES}
    start = datetime(2026, 11, 1, tzinfo=UTC)
    out = []
    for i in range(count):
        a, b = rng.sample(_NAMES, 2)
        p_a = 1.0 / (1.0 + 10 ** ((strength[b] - strength[a]) / 1.5))
        roll = rng.random()
        winner: Winner = "draw" if abs(roll - p_a) < 0.03 else ("a" if roll < p_a else "b")
        sa = PlayerStats(rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 1), rng.randint(0, 1))
        sb = PlayerStats(rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 1), rng.randint(0, 1))
        out.append(
            Match.single(
                a,
                b,
                winner,
                sa,
                sb,
                match_id=f"demo-{i + 1:04d}",
                played_at=start + timedelta(minutes=20 * i),
            )
        )
    return out


def bundled_sample() -> Path | None:
    """The engine's bundled sample history, when the package ships one."""
    path = Path(__file__).resolve().parent.parent / "data" / "sample_history.csv"
    return path if path.is_file() else None
