"""Match writes while PostgreSQL vacuums the change feed's table: do the writes wait for the vacuum?

Every write batch appends its ``change_events`` rows under a lock held until its commit (the feed's
dense sequences in commit order). A ``VACUUM`` of that table takes ``SHARE UPDATE EXCLUSIVE`` on it
for as long as it runs: a table lock in ``EXCLUSIVE`` mode conflicts with it, so each batch would
wait for the whole vacuum, and autovacuum, which asks for its lock without waiting, would skip the
table while batches keep it locked. This script measures what a vacuum does to the writes:

1. a fresh PostgreSQL database is seeded through the bulk import with ``--events`` matches (one feed
   row each), among ``--players`` players;
2. for each variant, in alternating ``--rounds``, a child process (under the variant's ``src``)
   applies batches of ``--size`` new matches back to back with :meth:`WriterSession.apply` for
   ``--duration`` seconds, while after ``--after`` seconds another connection runs ``VACUUM
   (FREEZE, DISABLE_PAGE_SKIPPING) change_events`` (every page read each time, so rounds repeat);
3. it prints per round the vacuum's time, the longest batch, the batches/s while the vacuum ran
   against before it, and how many batches took over 100 ms.

Variants: ``now`` (this checkout) and ``before`` (``--before OLD/src``, e.g. a ``git worktree``).

Usage::

    .venv/bin/python benchmarks/bench_vacuum_writes.py [--events 1000000] [--rounds 3] \
        [--variants before,now --before /path/to/old/src]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from bench_service import fresh_database

from sedma_elo.batch.history import lined_of
from sedma_elo.core.model import Match, PlayerStats
from sedma_elo.service import Ledger, submission_from_match
from sedma_elo.storage import open_database

VACUUM = "VACUUM (FREEZE, DISABLE_PAGE_SKIPPING) change_events"


def _matches(prefix: str, count: int, players: int, rng: random.Random) -> list[Match]:
    out = []
    day = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(count):
        a, b = rng.sample(range(1, players + 1), 2)
        stats = PlayerStats(won_by_16=rng.randint(0, 2))
        winner = "a" if rng.random() < 0.6 else "b"
        out.append(
            Match.single(
                f"p{a:06d}",
                f"p{b:06d}",
                winner,
                stats,
                match_id=f"{prefix}-{i}",
                played_at=day + timedelta(seconds=i),
            )
        )
    return out


def child(url: str, duration: float, after: float, size: int, players: int, prefix: str) -> None:
    """Write for ``duration`` s, vacuum after ``after`` s; print one JSON line of the figures."""
    rng = random.Random(prefix)
    subs = [submission_from_match(m) for m in _matches(prefix, 200_000, players, rng)]
    db = open_database(url, pool_size=2, max_overflow=0)
    spans: list[tuple[float, float]] = []
    vacuum: list[float] = []

    def run_vacuum() -> None:
        time.sleep(after)
        with psycopg.connect(dsn(url), autocommit=True) as conn:
            t0 = time.perf_counter()
            conn.execute(VACUUM)
            vacuum.extend((t0, time.perf_counter()))

    with Ledger(db).writer_session() as session:
        session.apply(subs[:size])  # the connection, prepared statements and version cache
        vacuuming = threading.Thread(target=run_vacuum)
        start = time.perf_counter()
        vacuuming.start()
        i = size
        while time.perf_counter() - start < duration or vacuuming.is_alive():
            t0 = time.perf_counter()
            session.apply(subs[i : i + size])
            spans.append((t0, time.perf_counter()))
            i += size
        vacuuming.join()
    db.dispose()
    v0, v1 = vacuum
    during = [s for s in spans if s[1] > v0 and s[0] < v1]
    before = [s for s in spans if s[1] <= v0]
    print(
        json.dumps(
            {
                "vacuum_s": v1 - v0,
                "longest_ms": max(e - s for s, e in spans) * 1000,
                "over_100ms": sum(e - s > 0.1 for s, e in spans),
                "per_s_during": len(during) / (v1 - v0),
                "per_s_before": len(before) / (v0 - spans[0][0]),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=4.0, help="seconds of writes (at least)")
    parser.add_argument("--after", type=float, default=1.0, help="seconds of writes before the vacuum")
    parser.add_argument("--size", type=int, default=8, help="matches a batch")
    parser.add_argument("--variants", default="now")
    parser.add_argument("--before", help="src of the code before (variant 'before')")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.duration, args.after, args.size, args.players, os.environ["BENCH_PREFIX"])
        return
    variants = args.variants.split(",")
    srcs = {"now": str(Path(__file__).resolve().parents[1] / "src"), "before": args.before}
    with fresh_database("postgresql") as url:
        db = open_database(url)
        ledger = Ledger(db)
        ledger.ensure_version()
        t0 = time.perf_counter()
        seed = _matches("seed", args.events, args.players, random.Random(1))
        ledger.import_history(lined_of(seed, list(range(1, len(seed) + 1))))  # as a file's lines
        db.dispose()
        print(f"seeded {args.events:,} matches (one feed row each) in {time.perf_counter() - t0:.0f} s")
        for r in range(args.rounds):
            for variant in variants:
                env = {**os.environ, "PYTHONPATH": srcs[variant], "BENCH_PREFIX": f"r{r}{variant}"}
                out = subprocess.run(
                    [sys.executable, __file__, "--child", url, "--duration", str(args.duration),
                     "--after", str(args.after), "--size", str(args.size), "--players", str(args.players)],
                    env=env, check=True, capture_output=True, text=True,
                ).stdout  # fmt: skip
                f = json.loads(out.strip().splitlines()[-1])
                print(
                    f"round {r + 1} {variant:<7} vacuum {f['vacuum_s']:6.2f} s   longest batch "
                    f"{f['longest_ms']:8.1f} ms   batches over 100 ms {f['over_100ms']:3d}   batches/s "
                    f"during the vacuum {f['per_s_during']:7.1f}, before it {f['per_s_before']:7.1f}"
                )


if __name__ == "__main__":
    main()
