"""Stability and speed of the bad-move judge on bot matches (issue 11).

Usage::

    .venv/bin/python benchmarks/bench_judge.py           # 60 two-player + 36 four-player matches, 5 seeds
    .venv/bin/python benchmarks/bench_judge.py --quick   # 12 + 6 matches

Every match is analysed under 5 analysis seeds (``AnalysisConfig.seed`` 0..4, mixed into the record's
own seed). Printed per table size:

* stability: of the moves flagged under any seed, the share flagged under all 5 (goal >= 95%),
  and the largest difference of one match's bad-move count between seeds (goal <= 1);
* speed: median and worst whole-match analysis, CPU time of one process (goals: median <= 0.3 s
  for two players, <= 1 s for four), and its ratio to the exact-only analysis of the same matches
  (``--judge exact``, the baseline run in this script);
* bad moves per match by bot kind (the judge solves deals exactly; no bot does).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from dataclasses import replace

from sedma_elo.game.analysis import AnalysisConfig, analyze
from sedma_elo.game.bots import Bot, GreedyBot, RandomBot, SamplingBot, play_match
from sedma_elo.game.config import GameRules
from sedma_elo.game.league import MixedBot
from sedma_elo.game.record import GameRecord
from sedma_elo.game.solver import Solver
from sedma_elo.game.value import ValueSolver

SEEDS = range(5)
KINDS = ("random", "mixed", "greedy", "sampling")


def _bot(kind: str, seed: int) -> Bot:
    if kind == "random":
        return RandomBot(seed, kind)
    if kind == "mixed":
        return MixedBot(0.5, seed, kind)
    if kind == "greedy":
        return GreedyBot(kind)
    return SamplingBot(4, seed, name=kind)


def _matches(n: int, players: int) -> list[tuple[GameRecord, list[str]]]:
    """``n`` matches, seats drawn in turn from every pair of distinct bot kinds."""
    pairs = [(a, b) for a in KINDS for b in KINDS if a != b]
    out = []
    for i in range(n):
        a, b = pairs[i % len(pairs)]
        kinds = [a, b] * (players // 2)
        bots = [_bot(k, 1000 * i + s) for s, k in enumerate(kinds)]
        ids = [f"{k}-{s}" for s, k in enumerate(kinds)]
        played = play_match(bots, ids, 7919 * i + players, GameRules(players=players))
        out.append((played.record, kinds))
    return out


def bench(n: int, players: int, config: AnalysisConfig) -> None:
    """Analyse ``n`` matches under every seed and print stability, speed and bad moves by bot."""
    matches = _matches(n, players)
    solver, values = Solver(), ValueSolver()
    analyze(matches[0][0], AnalysisConfig(), solver, values=values)  # load the compiled code
    base_times = []
    for record, _kinds in matches:
        t = time.process_time()
        analyze(record, AnalysisConfig(judge="exact"), solver, values=values)
        base_times.append(time.process_time() - t)
    flagged: dict[tuple[int, int, int], set[int]] = defaultdict(set)
    sampled_keys: set[tuple[int, int, int]] = set()
    counts: dict[int, list[int]] = defaultdict(list)
    times: list[float] = []
    by_kind: dict[str, list[int]] = defaultdict(list)
    judged = unjudged = 0
    for seed in SEEDS:
        for m, (record, kinds) in enumerate(matches):
            t = time.process_time()
            result = analyze(record, replace(config, seed=seed), solver, values=values)
            times.append(time.process_time() - t)
            counts[m].append(len(result.bad_moves()))
            for b in result.bad_moves():
                flagged[(m, b.round, b.move)].add(seed)
                if b.method == "sampled":
                    sampled_keys.add((m, b.round, b.move))
            if seed == 0:
                judged += result.judged_moves
                unjudged += result.unjudged_moves
                for seat, report in enumerate(result.players):
                    by_kind[kinds[seat]].append(len(report.bad_moves))
    in_all = sum(1 for s in flagged.values() if len(s) == len(SEEDS))
    sampled_all = sum(1 for k in sampled_keys if len(flagged[k]) == len(SEEDS))
    spread = max(max(c) - min(c) for c in counts.values())
    median, base = statistics.median(times), statistics.median(base_times)
    share = 100 * judged / max(1, judged + unjudged)
    print(
        f"{players} players, {n} matches, {judged} judged moves of {judged + unjudged} real choices "
        f"({share:.1f}% judged; {unjudged} too early in the round)"
    )
    print(
        f"  stability: {in_all}/{len(flagged)} flagged moves flagged under all {len(SEEDS)} seeds "
        f"({100 * in_all / max(1, len(flagged)):.1f}%); sampled ones {sampled_all}/{len(sampled_keys)}; "
        f"largest per-match count difference {spread}"
    )
    print(
        f"  speed (CPU): median {median:.3f} s, max {max(times):.3f} s a match; exact-only baseline "
        f"median {base:.3f} s (ratio {median / base:.1f}x)"
    )
    per_kind = ", ".join(
        f"{k} {statistics.mean(by_kind[k]):.2f}" for k in KINDS if by_kind[k]
    )  # per seat of that kind
    print(f"  bad moves per match and player, by bot: {per_kind}")


def main() -> None:
    """Run the two-player and the four-player benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer matches")
    parser.add_argument("--max-deals", type=int, default=AnalysisConfig().max_deals)
    parser.add_argument("--min-deals", type=int, default=AnalysisConfig().min_deals)
    parser.add_argument("--max-listed", type=int, default=AnalysisConfig().max_listed)
    parser.add_argument("--max-listed-close", type=int, default=AnalysisConfig().max_listed_close)
    parser.add_argument("--confidence", type=float, default=AnalysisConfig().confidence)
    parser.add_argument("--max-stock", type=int, default=None, help="default: the analysis default")
    parser.add_argument("--players", type=int, choices=(2, 4), default=None, help="default: both")
    parser.add_argument(
        "--matches2", type=int, default=None, help="two-player matches (default 60, quick 12)"
    )
    parser.add_argument(
        "--matches4", type=int, default=None, help="four-player matches (default 36, quick 6)"
    )
    args = parser.parse_args()
    config = AnalysisConfig(
        min_deals=args.min_deals,
        max_deals=args.max_deals,
        confidence=args.confidence,
        max_stock=args.max_stock,
        max_listed=args.max_listed,
        max_listed_close=args.max_listed_close,
    )
    print(f"config: {config}")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.players in (None, 2):
        bench(args.matches2 or (12 if args.quick else 60), 2, config)
    if args.players in (None, 4):
        bench(args.matches4 or (6 if args.quick else 36), 4, config)


if __name__ == "__main__":
    main()
