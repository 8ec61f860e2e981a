"""Single-match rating updates per second: sedma-elo's rate() against pure-Python peers.

Each contender does one rating update per call, side by side in one run:

- ``sedma_elo.rate`` on the 400 matches of the bundled sample (varied ratings and statistics),
  ratings only (the explanation is built only when read), then also reading the explanation
  (``result.changes``) and turning it into the JSON object of the HTTP service;
- ``elote`` ``EloCompetitor.beat`` (plain Elo), ``openskill`` ``PlackettLuce.rate`` on two teams of
  one, ``trueskill.rate_1vs1``: their one-call update between two players.

Run: ``.venv/bin/python benchmarks/bench_rate.py [--seconds 0.5] [--repeat 5]``. The best of
``--repeat`` timings is reported (least disturbed by other processes).
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


def _calls_per_second(step: Callable[[], object], seconds: float) -> float:
    """Calls per second over one run of about ``seconds``."""
    batch = 1000
    gc.collect()
    calls, start = 0, time.perf_counter()
    while True:
        for _ in range(batch):
            step()
        calls += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls / elapsed


def contenders() -> dict[str, tuple[str, Callable[[], object]]]:
    """name -> (what one call does, the call)."""
    matches = load_sample_history()
    # Ratings as they stand after the sample: realistic spread, K tiers and expectations.
    ratings: dict[str, int] = {}
    for m in matches:
        ratings.update(rate(m, ratings).new_ratings)
    sample = cycle(matches)

    def sedma() -> object:
        return rate(next(sample), ratings).new_ratings

    def sedma_explained() -> object:
        return rate(next(sample), ratings).changes

    def sedma_json() -> object:
        return result_to_dict(rate(next(sample), ratings))

    def sedma_compat() -> object:
        return calculate_new_ratings(1000, 1100, True, 0, 2, 1, 0, 0, 0, 0, 1)

    out: dict[str, tuple[str, Callable[[], object]]] = {
        "sedma-elo rate()": ("new ratings of one sample match", sedma),
        "sedma-elo rate() + explanation": ("... and read result.changes", sedma_explained),
        "sedma-elo rate() + JSON object": ("... and build result_to_dict()", sedma_json),
        "sedma-elo compat": ("calculate_new_ratings(...), the C# signature", sedma_compat),
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
        pa, pb = model.rating(), model.rating()
        out["openskill PlackettLuce"] = ("model.rate([[a], [b]])", lambda: model.rate([[pa], [pb]]))
    except ImportError:
        pass
    try:
        import trueskill

        ta, tb = trueskill.Rating(), trueskill.Rating()
        out["trueskill"] = ("rate_1vs1(a, b)", lambda: trueskill.rate_1vs1(ta, tb))
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
    # Round robin, best of --repeat: on a shared machine the load changes from second to second,
    # and taking turns exposes every contender to it alike.
    for _ in range(args.repeat):
        for name, (_, call) in todo.items():
            best[name] = max(best[name], _calls_per_second(call, args.seconds))
    results = {name: (what, best[name]) for name, (what, _) in todo.items()}
    elote = results.get("elote Elo", ("", 0.0))[1]
    table = Table(title="One rating update per call (pure Python, best of runs)")
    table.add_column("contender")
    table.add_column("one call")
    table.add_column("calls/s", justify="right")
    table.add_column("µs/call", justify="right")
    table.add_column("vs elote", justify="right")
    for name, (what, per_second) in results.items():
        ratio = f"{per_second / elote:.2f}x" if elote else "-"
        table.add_row(escape(name), escape(what), f"{per_second:,.0f}", f"{1e6 / per_second:.2f}", ratio)
    Console().print(table)


if __name__ == "__main__":
    main()
