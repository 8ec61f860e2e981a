"""Single-match rating updates per second: sedma-elo's rate() against pure-Python peers.

Each contender does the same work per call: one rating update between two players AND storing
the new ratings where the next call reads them (as ``elote``'s ``beat()`` does in place), side by
side in one run:

- ``sedma_elo.rate`` on the 400 matches of the bundled sample (varied ratings and statistics),
  ratings only (the explanation is built only when read), written back into the ratings dict;
  then also reading the explanation (``result.changes``) and turning it into the JSON object of
  the HTTP service; the C# drop-in with its two ratings carried from call to call;
- ``elote`` ``EloCompetitor.beat`` (plain Elo, updates both competitors in place), ``openskill``
  ``PlackettLuce.rate`` on two teams of one and ``trueskill.rate_1vs1``, their results stored back.

Run: ``.venv/bin/python benchmarks/bench_rate.py [--seconds 0.5] [--repeat 5]``. Times are wall
time (``perf_counter``) and CPU time of this process (``process_time``); the best of ``--repeat``
runs is reported (least disturbed by other processes).
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from itertools import cycle

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sedma_elo import rate
from sedma_elo.cli.engine_commands import load_sample_history
from sedma_elo.core.compat import calculate_new_ratings
from sedma_elo.core.explain import result_to_dict


def _calls_per_second(step: Callable[[], object], seconds: float) -> tuple[float, float]:
    """Calls per wall second and per CPU second over one run of about ``seconds`` (wall)."""
    batch = 1000
    gc.collect()
    calls, start, cpu = 0, time.perf_counter(), time.process_time()
    while True:
        for _ in range(batch):
            step()
        calls += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls / elapsed, calls / max(time.process_time() - cpu, 1e-9)


def contenders() -> dict[str, tuple[str, Callable[[], object]]]:
    """name -> (what one call does, the call)."""
    matches = load_sample_history()
    # Ratings as they stand after the sample: realistic spread, K tiers and expectations.
    ratings: dict[str, int] = {}
    for m in matches:
        ratings.update(rate(m, ratings).new_ratings)
    sample = cycle(matches)

    def sedma() -> object:
        new = rate(next(sample), ratings).new_ratings
        ratings.update(new)
        return new

    def sedma_explained() -> object:
        result = rate(next(sample), ratings)
        ratings.update(result.new_ratings)
        return result.changes

    def sedma_json() -> object:
        result = rate(next(sample), ratings)
        ratings.update(result.new_ratings)
        return result_to_dict(result)

    pair = [1000, 1100]

    def sedma_compat() -> object:
        pair[0], pair[1] = calculate_new_ratings(pair[0], pair[1], True, 0, 2, 1, 0, 0, 0, 0, 1)
        return pair

    out: dict[str, tuple[str, Callable[[], object]]] = {
        "sedma-elo rate()": ("rate one sample match, store its new ratings", sedma),
        "sedma-elo rate() + explanation": ("... and read result.changes", sedma_explained),
        "sedma-elo rate() + JSON object": ("... and build result_to_dict()", sedma_json),
        "sedma-elo compat": ("a, b = calculate_new_ratings(a, b, ...)", sedma_compat),
    }
    try:
        from elote import EloCompetitor

        a, b = EloCompetitor(initial_rating=1000), EloCompetitor(initial_rating=1100)
        out["elote Elo"] = ("EloCompetitor.beat()", lambda: a.beat(b))
    except ImportError:
        pass
    try:
        from openskill.models import PlackettLuce

        model = PlackettLuce()
        teams = [[model.rating()], [model.rating()]]

        def openskill_rate() -> object:
            teams[:] = model.rate(teams)
            return teams

        out["openskill PlackettLuce"] = ("teams = model.rate(teams)", openskill_rate)
    except ImportError:
        pass
    try:
        import trueskill

        players = [trueskill.Rating(), trueskill.Rating()]

        def trueskill_rate() -> object:
            players[:] = trueskill.rate_1vs1(players[0], players[1])
            return players

        out["trueskill"] = ("a, b = rate_1vs1(a, b)", trueskill_rate)
    except ImportError:
        pass
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one timing run")
    parser.add_argument("--repeat", type=int, default=5, help="timing runs per contender (best counts)")
    args = parser.parse_args()
    todo = contenders()
    best = dict.fromkeys(todo, 0.0)
    best_cpu = dict.fromkeys(todo, 0.0)
    # Round robin, best of --repeat: on a shared machine the load changes from second to second,
    # and taking turns exposes every contender to it alike.
    for _ in range(args.repeat):
        for name, (_, call) in todo.items():
            wall, cpu = _calls_per_second(call, args.seconds)
            best[name] = max(best[name], wall)
            best_cpu[name] = max(best_cpu[name], cpu)
    elote, elote_cpu = best.get("elote Elo", 0.0), best_cpu.get("elote Elo", 0.0)
    table = Table(title="One rating update per call, new ratings stored (pure Python, best of runs)")
    table.add_column("contender")
    table.add_column("one call")
    table.add_column("calls/s wall", justify="right")
    table.add_column("µs/call wall", justify="right")
    table.add_column("vs elote wall", justify="right")
    table.add_column("vs elote CPU", justify="right")
    for name, (what, _) in todo.items():
        per_second = best[name]
        ratio = f"{per_second / elote:.2f}x" if elote else "-"
        ratio_cpu = f"{best_cpu[name] / elote_cpu:.2f}x" if elote_cpu else "-"
        table.add_row(
            escape(name), escape(what), f"{per_second:,.0f}", f"{1e6 / per_second:.2f}", ratio, ratio_cpu
        )
    Console().print(table)


if __name__ == "__main__":
    main()
