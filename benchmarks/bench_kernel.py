"""The compiled update loop alone, in matches per second, next to a plain numba Elo loop.

Synthetic int arrays (uniform random pairs among 50,000 players, ~45/45/10 wins/losses/draws,
small Poisson counts) are replayed by :func:`sedma_elo.batch.kernel.run_kernel` under several rule sets,
and by a plain numba Elo loop (constant K = 32, float64 ratings, no bonuses), in the same
process on one core. Compilation is done before timing; the best of several runs is reported.
The runs are interleaved (each round times every loop once), so that a slow spell of the machine
hits every loop alike: on stop 45's machine a spell of several seconds halved every loop's speed,
and timing one loop's runs back to back put a whole loop inside it (16.1 against 42.4 M/s).

    python benchmarks/bench_kernel.py [--quick] [--matches N]

Target: >= 20 million matches/s for ours (reference rules).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from sedma_elo import REFERENCE_RULES
from sedma_elo.batch.history import HistoryArrays
from sedma_elo.batch.kernel import run_kernel


@njit(cache=True)
def plain_elo(player_a, player_b, winner, ratings):  # type: ignore[no-untyped-def]
    """Textbook Elo: constant K, float64 ratings, expected score with pow every match."""
    for i in range(player_a.size):
        a = player_a[i]
        b = player_b[i]
        ea = 1.0 / (1.0 + 10.0 ** ((ratings[b] - ratings[a]) / 400.0))
        w = winner[i]
        sa = 1.0 if w == 0 else (0.0 if w == 1 else 0.5)
        delta = 32.0 * (sa - ea)
        ratings[a] += delta
        ratings[b] -= delta


def synthetic(n: int, players: int, seed: int = 0) -> HistoryArrays:
    rng = np.random.default_rng(seed)
    pa = rng.integers(0, players, n, dtype=np.int32)
    pb = ((pa + rng.integers(1, players, n, dtype=np.int32)) % players).astype(np.int32)
    winner = rng.choice(np.array([0, 1, 2], dtype=np.int8), size=n, p=[0.45, 0.45, 0.1])
    counts = rng.poisson(0.4, size=(n, 8)).astype(np.int32)
    return HistoryArrays(
        player_ids=[f"p{i}" for i in range(players)],
        player_a=pa,
        player_b=pb,
        winner=winner,
        counts=counts,
        match_ids=[""] * n,
        played_at=[""] * n,
        lines=np.zeros(n, dtype=np.int64),
    )


def best_of(fns, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    """Each of ``fns``' best time over ``runs`` rounds; every round times each function once."""
    best = [float("inf")] * len(fns)
    for _ in range(runs):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1M matches, 2 runs")
    parser.add_argument("--matches", type=int, default=5_000_000, help="matches per run (default 5M)")
    args = parser.parse_args()
    n = 1_000_000 if args.quick else args.matches
    runs = 2 if args.quick else 5
    players = 50_000
    history = synthetic(n, players)

    def ours(rules):  # type: ignore[no-untyped-def]
        def run() -> None:
            ratings = np.full(players, rules.initial_rating, dtype=np.int64)
            games = np.zeros(players, dtype=np.int64)
            run_kernel(history, rules, ratings, games)

        return run

    def plain() -> None:
        plain_elo(history.player_a, history.player_b, history.winner, np.full(players, 1500.0))

    variants = {
        "ours, reference rules": REFERENCE_RULES,
        "ours, K by games + margin": REFERENCE_RULES.replace(
            k_mode="sum", k_new_player_games=20, k_new_player_multiplier=1.5, margin_scale=0.2
        ),
        "ours, zero-sum + floor": REFERENCE_RULES.replace(zero_sum=True, rating_floor=800),
    }
    loops = [ours(rules) for rules in variants.values()]
    for loop in [*loops, plain]:
        loop()  # compile / load the cache
    *times, plain_time = best_of([*loops, plain], runs)
    print(f"{n:,} synthetic matches, {players:,} players, best of {runs} interleaved runs, one core")
    print(f"{'loop':34}{'seconds':>10}{'M matches/s':>14}{'vs plain':>10}")
    for name, t in zip(variants, times, strict=True):
        print(f"{name:34}{t:10.3f}{n / t / 1e6:14.1f}{plain_time / t:10.2f}")
    print(f"{'plain numba Elo (K=32, float64)':34}{plain_time:10.3f}{n / plain_time / 1e6:14.1f}{1.0:10.2f}")


if __name__ == "__main__":
    main()
