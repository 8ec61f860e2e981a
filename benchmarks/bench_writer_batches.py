"""The writer's serial step alone: write batches applied back to back on one connection, no HTTP.

What bounds the service's match writes on PostgreSQL is the writer process and the database
server working in turn on each batch (``bench_cpu_split.py``: 1.26 of 2 cores busy). This applies
``--batches`` batches of ``--size`` new matches (random pairs of ``--players`` seeded players)
with :meth:`WriterSession.apply` in a child process, and prints per batch the wall time, the
child's CPU and the server backend's CPU (``/proc``: a server on this machine, Linux). Variants
alternate in short rounds on one ledger, each child started afresh, and each round's ratio to the
first variant's run of the same round is kept (this machine's speed moves by the minute):

* ``now``: this checkout;
* ``before``: the code of another checkout (``--before OLD/src``, e.g. a ``git worktree``).

Usage::

    .venv/bin/python benchmarks/bench_writer_batches.py [--rounds 12] [--batches 250] [--size 8] \
        [--variants before,now --before /path/to/old/src]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import cpu_ticks
from bench_service import fresh_database, seed

from sedma_elo.core.model import Match, PlayerStats
from sedma_elo.service import Ledger, submission_from_match
from sedma_elo.storage import open_database

TICK = os.sysconf("SC_CLK_TCK")


def _matches(prefix: str, count: int, players: int, rng: random.Random) -> list[Match]:
    out = []
    for i in range(count):
        a, b = rng.sample(range(1, players + 1), 2)
        stats_a, stats_b = PlayerStats(won_by_16=rng.randint(0, 2)), PlayerStats(bad_moves=rng.randint(0, 3))
        winner = "a" if rng.random() < 0.6 else "b"
        out.append(Match.single(f"p{a:06d}", f"p{b:06d}", winner, stats_a, stats_b, match_id=f"{prefix}-{i}"))
    return out


def child(url: str, batches: int, size: int, players: int, prefix: str) -> None:
    """Apply the batches and print one JSON line: per batch wall, client CPU and server CPU (ms)."""
    rng = random.Random(prefix)
    subs = [submission_from_match(m) for m in _matches(prefix, batches * size, players, rng)]
    db = open_database(url, pool_size=2, max_overflow=0)
    ledger = Ledger(db)
    with ledger.writer_session() as session:
        session.apply(subs[:size])  # the connection, prepared statements and version cache
        backend = int(session._conn.driver_connection.info.backend_pid)  # type: ignore[union-attr]
        work = [subs[i : i + size] for i in range(size, len(subs), size)]
        server0, cpu0, wall0 = cpu_ticks(backend), time.process_time(), time.perf_counter()
        for batch in work:
            outcomes = session.apply(batch)
            assert all(o.status == "created" for o in outcomes), outcomes[0]
        wall, cpu, server = (
            time.perf_counter() - wall0,
            time.process_time() - cpu0,
            cpu_ticks(backend) - server0,
        )
    db.dispose()
    n = len(work)
    print(json.dumps({"wall": wall / n * 1e3, "client": cpu / n * 1e3, "server": server / TICK / n * 1e3}))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--batches", type=int, default=250)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--variants", default="before,now")
    parser.add_argument("--before", metavar="OLD/src")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        url, _, batches, players, prefix = args.child
        child(url, int(batches), args.size, int(players), prefix)
        return
    variants = args.variants.split(",")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; batches of {args.size}")
    found: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    with fresh_database("postgresql") as url:
        seed(url, args.players)
        for r in range(args.rounds):
            for v in variants:
                env = dict(os.environ)
                if v == "before":
                    env["PYTHONPATH"] = args.before
                cmd = [sys.executable, __file__, "--size", str(args.size), "--child", url, v]
                cmd += [str(args.batches), str(args.players), f"r{r}{v}"]
                out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
                got = json.loads(out.strip().splitlines()[-1])
                found[v].append(got)
                rate = args.size / got["wall"] * 1e3
                print(
                    f"  round {r + 1} {v:<7} {got['wall']:6.2f} ms a batch ({rate:7.0f} matches/s),"
                    f" writer CPU {got['client']:5.2f} ms, server CPU {got['server']:5.2f} ms"
                )
    base = variants[0]
    for v in variants:
        wall = statistics.median(x["wall"] for x in found[v])
        client = statistics.median(x["client"] for x in found[v])
        server = statistics.median(x["server"] for x in found[v])
        # Each round's ratio to the first variant's run of the same round: the machine's speed
        # moves by the minute, and both runs of a round see about the same.
        ratio = statistics.median(b["wall"] / x["wall"] for x, b in zip(found[v], found[base], strict=True))
        per = 1e3 / args.size
        print(
            f"  {v:<7} median {wall:6.2f} ms a batch, {args.size / wall * 1e3:7.0f} matches/s;"
            f" {ratio:.3f}x {base} (median of the rounds' ratios); writer {client * per:5.0f} µs,"
            f" server {server * per:5.0f} µs a match"
        )


if __name__ == "__main__":
    main()
