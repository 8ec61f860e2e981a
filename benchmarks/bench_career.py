"""A long career on PostgreSQL: ``Ledger.player_career`` and the player page of the busiest player.

On an existing PostgreSQL ledger (``--database-url``; build one with ``make_league.py`` and
``sedma-elo import``), for the player whose match count is closest to ``--matches`` (10,000):

1. ``EXPLAIN (ANALYZE, BUFFERS)`` of the career statement (``--explain``);
2. ``Ledger.player_career`` and the whole player page (``GET /players/ID`` through the app,
   HTML included) ``--runs`` times each, warm: median and best milliseconds.

``--baseline-src OLD/src`` runs step 2 first with another checkout's code in a child process
(before/after in the same run, on the same database; the child sees the schema stamped at
revision 0006, whose statement does not use what 0007 changed).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_career.py --database-url postgresql+psycopg://... \
        [--matches 10000] [--runs 7] [--explain] [--baseline-src /path/to/main/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from bench_league10m import busiest_near, stamped


def explain(url: str, player: str) -> None:
    """Print the plan of the career statement with its timings and buffer counts."""
    from sedma_elo.service.ledger import reads

    sql = reads._CAREER_SQL.format(ph="%s")
    with psycopg.connect(dsn(url)) as conn:
        vid = conn.execute("SELECT id FROM rating_versions WHERE active").fetchone()
        assert vid is not None
        for (line,) in conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, (vid[0], player)).fetchall():
            print(f"    {line}")


def timed(url: str, player: str, runs: int) -> None:
    """Time the career read and the page, ``runs`` times each after one warm-up; print the figures."""
    from fastapi.testclient import TestClient

    from sedma_elo.service import Ledger, ServiceSettings, create_app
    from sedma_elo.storage import open_database

    db = open_database(url)
    ledger = Ledger(db)
    career = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        items = ledger.player_career(player)
        if i:
            career.append(time.perf_counter() - t0)
    db.dispose()
    page = []
    with TestClient(create_app(ServiceSettings(database_url=url, rate_limit=0))) as client:
        for i in range(runs + 1):
            t0 = time.perf_counter()
            r = client.get(f"/players/{player}")
            if i:
                page.append(time.perf_counter() - t0)
            assert r.status_code == 200, r.status_code
    for name, xs in (("player_career", career), ("player page", page)):
        print(
            f"  {name:<14} median {statistics.median(xs) * 1000:7.1f} ms  best {min(xs) * 1000:7.1f} ms"
            f"  ({len(items):,} matches, {runs} runs)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--player", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    player = args.player
    if player is None:
        player, count = busiest_near(args.database_url, args.matches)
        print(f"machine: load average {os.getloadavg()[0]:.2f}; player {player}: {count:,} matches")
    if args.explain:
        explain(args.database_url, player)
    if args.baseline_src is not None:
        print(f"  -- baseline ({args.baseline_src})")
        env = {**os.environ, "PYTHONPATH": str(args.baseline_src)}
        cmd = [sys.executable, __file__, "--database-url", args.database_url, "--player", player]
        # The older code refuses a schema newer than its head: stamp the revision before 0007 for its
        # run (0007 only adds an INCLUDE column to an index the older statement does not use).
        with stamped(args.database_url, "0006_queue"):
            subprocess.run([*cmd, "--runs", str(args.runs)], env=env, check=True)
        print("  -- this checkout")
    timed(args.database_url, player, args.runs)


if __name__ == "__main__":
    main()
