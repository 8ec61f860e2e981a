"""Random and adversarial cases for the C# method, seeded so every run draws the same ones.

A case is the method's 11 arguments in its order (see :data:`oracle.csharp.Case`). The mixes aim at
where a port goes wrong: the K tier edges, equal ratings (expected score exactly 0.5), small
rating differences, the bonus and malus caps, the clamp of the adjusted score, ratings at the
limits and counts up to ``MAX_COUNT``.
"""

from __future__ import annotations

import numpy as np

from sedma_elo import MAX_COUNT, MAX_RATING, MIN_RATING, Match, PlayerStats, Rules, rate

from .csharp import Case

#: Ratings where K changes, and their neighbours.
K_EDGES = (1199, 1200, 1201, 1799, 1800, 1801, 2199, 2200, 2201)
#: Counts around each cap (16er: 3 rounds, 24er: 2, 4-and-last: 3, bad moves: 15) and far beyond.
COUNT_EDGES = (0, 1, 2, 3, 4, 14, 15, 16, 17, 100, MAX_COUNT)


def _counts(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 8)`` counts: mostly small (0..4, where the caps bite), some at the edges, a few huge."""
    small = rng.integers(0, 5, size=(n, 8))
    bad = rng.integers(0, 20, size=(n, 2))
    small[:, 0:2] = bad
    edges = rng.choice(np.array(COUNT_EDGES), size=(n, 8))
    pick = rng.random((n, 8)) < 0.15
    return np.where(pick, edges, small)


def _ratings(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of ratings from five mixes: uniform, K edges, equal, near each other, at the limits."""
    kind = rng.integers(0, 5, size=n)
    a = rng.integers(MIN_RATING, MAX_RATING + 1, size=n)
    b = rng.integers(MIN_RATING, MAX_RATING + 1, size=n)
    edges = np.array(K_EDGES)
    near = rng.integers(-3000, 3001, size=n)
    a = np.where(kind == 1, rng.choice(edges, size=n), a)
    b = np.where(kind == 1, np.where(rng.random(n) < 0.5, rng.choice(edges, size=n), a + near // 10), b)
    a = np.where(kind >= 2, rng.integers(0, 3001, size=n), a)
    b = np.where(kind == 2, a, b)  # exact ties of the ratings: expected score exactly 0.5
    b = np.where(kind == 3, a + rng.integers(-40, 41, size=n), b)
    limits = np.array([MIN_RATING, MIN_RATING + 1, MAX_RATING - 1, MAX_RATING])
    a = np.where(kind == 4, rng.choice(limits, size=n), a)
    b = np.where(kind == 4, np.where(rng.random(n) < 0.5, -a, rng.choice(limits, size=n)), b)
    return a, np.clip(b, MIN_RATING, MAX_RATING)


def random_cases(n: int, seed: int) -> list[Case]:
    """``n`` cases from the mixes above (deterministic for a given seed)."""
    rng = np.random.default_rng(seed)
    a, b = _ratings(rng, n)
    won = rng.random(n) < 0.5
    counts = _counts(rng, n)
    return [
        (ra, rb, w, *c)  # type: ignore[misc]
        for ra, rb, w, c in zip(a.tolist(), b.tolist(), won.tolist(), counts.tolist(), strict=True)
    ]


def rate_case(c: Case, rules: Rules, *, explained: bool = False) -> tuple[int, int]:
    """rate()'s new ratings for a case (``explained``: read from the explanation, the slower path)."""
    ra, rb, won, bad_a, bad_b, w16a, w16b, w24a, w24b, w4a, w4b = c
    stats_a, stats_b = PlayerStats(bad_a, w16a, w24a, w4a), PlayerStats(bad_b, w16b, w24b, w4b)
    res = rate(Match.single("a", "b", "a" if won else "b", stats_a, stats_b), {"a": ra, "b": rb}, rules)
    if explained:
        return res["a"].rating_after, res["b"].rating_after
    return res.new_ratings["a"], res.new_ratings["b"]
