"""Speed of the game engine: exact endgame solve, whole-match analysis, bot league.

Usage::

    .venv/bin/python benchmarks/bench_game.py          # 2000 positions, 20+20 matches, 10,000-match league
    .venv/bin/python benchmarks/bench_game.py --quick  # a smaller run of each

Goals (issue 5): exact solve of a stock-empty position, median under 10 ms; analysis of a whole
two-player match under 2 s on one core; a league of 10,000 matches under a minute.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from sedma_elo.game.analysis import AnalysisConfig, analyze
from sedma_elo.game.bots import GreedyBot, RandomBot, SamplingBot, play_match
from sedma_elo.game.cards import deal_deck
from sedma_elo.game.config import GameRules
from sedma_elo.game.league import LeagueConfig, run_league, write_history_csv
from sedma_elo.game.solver import Solver
from sedma_elo.game.state import RoundState


def _stock_empty_position(seed: int) -> RoundState:
    """Random play from a seeded deal until the stock is empty (both hands hold four cards)."""
    rng = random.Random(seed)
    state = RoundState(deal_deck(seed, 0), 2, seed % 2)
    while state.pos < 32 or state.led >= 0:
        state.play(rng.choice(state.legal_moves()))
    return state


def bench_solver(n: int) -> None:
    """Median and worst time of an exact solve, each from an empty table (cold) and with one shared table."""
    positions = [_stock_empty_position(seed) for seed in range(n)]
    cold = []
    for state in positions:
        solver = Solver()
        t = time.process_time()
        solver.move_values(state)
        cold.append(time.process_time() - t)
    shared = Solver()
    warm = []
    for state in positions:
        t = time.process_time()
        shared.move_values(state)
        warm.append(time.process_time() - t)
    print(
        f"solver, {n} stock-empty positions (every move's exact value, fresh table, CPU time): "
        f"median {statistics.median(cold) * 1e3:.2f} ms, p95 {sorted(cold)[int(0.95 * n)] * 1e3:.2f} ms, "
        f"max {max(cold) * 1e3:.2f} ms; shared table: median {statistics.median(warm) * 1e3:.3f} ms"
    )


def bench_analysis(n: int) -> None:
    """Full analysis (default AnalysisConfig) of greedy-vs-sampling matches, target 3 and target 5."""
    warm = play_match([GreedyBot(), SamplingBot(4, 0)], ["g", "s"], 0, GameRules(target=3))
    analyze(warm.record, AnalysisConfig())  # loads the compiled value search from the disk cache
    for target in (3, 5):
        times, rounds = [], []
        for seed in range(n):
            played = play_match(
                [GreedyBot(), SamplingBot(4, seed)], ["g", "s"], seed, GameRules(target=target)
            )
            t = time.process_time()
            analyze(played.record, AnalysisConfig(seed=seed))
            times.append(time.process_time() - t)
            rounds.append(len(played.results))
        print(
            f"analysis, {n} matches to {target} (mean {statistics.mean(rounds):.1f} rounds, "
            f"max {max(rounds)}), default judge, CPU time: median {statistics.median(times):.3f} s, "
            f"max {max(times):.3f} s ({max(times) / rounds[times.index(max(times))]:.3f} s a round)"
        )


def bench_league(n: int) -> None:
    """A league of ``n`` matches written to a CSV (default mix, bad moves counted in the endgame)."""
    with TemporaryDirectory() as tmp:
        t, c = time.perf_counter(), time.process_time()
        write_history_csv(Path(tmp) / "league.csv", run_league(LeagueConfig(matches=n, seed=1)))
        dt, dc = time.perf_counter() - t, time.process_time() - c
    print(
        f"league, {n} matches (2% with a sampling bot, endgame bad moves): {dt:.1f} s wall, "
        f"{dc:.1f} s CPU ({n / dt:.0f} matches/s wall)"
    )
    t = time.perf_counter()
    for seed in range(n // 10):
        play_match([RandomBot(seed), GreedyBot()], ["r", "g"], seed)
    dt = time.perf_counter() - t
    print(f"  play only, random vs greedy: {(n // 10) / dt:.0f} matches/s")


def main() -> None:
    """Run the three benchmarks and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (a few seconds)")
    args = parser.parse_args()
    bench_solver(200 if args.quick else 2000)
    bench_analysis(3 if args.quick else 20)
    bench_league(1000 if args.quick else 10_000)


if __name__ == "__main__":
    main()
