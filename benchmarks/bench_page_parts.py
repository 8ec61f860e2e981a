"""The player page's reads one by one on a large PostgreSQL ledger, before/after in one run.

For the player whose match count is closest to ``--matches`` (10,000) on ``--database-url``, in
process: ``get_player``, the rank (``around(player, 0)``), ``career_page``, ``career_series``,
``career_summary`` and the whole page (``GET /players/ID`` through the app), ``--runs`` times
each after one warm-up, median and max milliseconds; then the rank of ``--sample`` random players
and ``player_history(limit=50)`` of as many random players (each once: mostly cold pages), then
(this checkout) ``player_history_async``, the history route's read, of as many other random players.

The summary is also timed with no stored state first (this checkout: the player's
``career_states`` row deleted before), then from the state its first read stored.

``--before OLD/src`` runs the same first with another checkout's code in a child process, with
``alembic_version`` stamped to ``--before-revision`` for its run (older code refuses a newer
schema; what 0011 adds, it does not read).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_page_parts.py --database-url postgresql+psycopg://... \
        [--matches 10000] [--runs 7] [--sample 200] [--before /work/wt/base/src]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from bench_league10m import busiest_near, stamped


def _ms(f: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median and max milliseconds of ``runs`` calls after one warm-up."""
    f()
    xs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        xs.append((time.perf_counter() - t0) * 1000)
    return statistics.median(xs), max(xs)


def _once(f: Callable[[Any], Any], items: list[Any]) -> tuple[float, float]:
    """Median and p99 milliseconds of one call per item."""
    xs = []
    for item in items:
        t0 = time.perf_counter()
        f(item)
        xs.append((time.perf_counter() - t0) * 1000)
    xs.sort()
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.99))]


def _line(name: str, figures: tuple[float, float], what: str = "median / max") -> None:
    print(f"  {name:<26} {figures[0]:8.1f} {figures[1]:8.1f} ms ({what})", flush=True)


def timed(url: str, player: str, runs: int, sample: int) -> None:
    """Print every figure for this checkout's code."""
    from fastapi.testclient import TestClient

    from sedma_elo.service import Ledger, ServiceSettings, create_app
    from sedma_elo.storage import open_database

    conninfo = dsn(url)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        stored = conn.execute("SELECT to_regclass('career_states')").fetchone()
        if stored is not None and stored[0] is not None:
            conn.execute(
                "DELETE FROM career_states WHERE player_key = (SELECT id FROM players WHERE player_id = %s)",
                (player,),
            )
        vid = conn.execute("SELECT id FROM rating_versions WHERE active").fetchone()
        assert vid is not None
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT player_id FROM player_ratings TABLESAMPLE SYSTEM (1) REPEATABLE (7)"
                " WHERE version_id = %s LIMIT %s",
                (vid[0], 3 * sample),
            ).fetchall()
        ]
    random.Random(11).shuffle(ids)
    ranks, histories, others = ids[0::3][:sample], ids[1::3][:sample], ids[2::3][:sample]
    db = open_database(url, migrate=False)
    ledger = Ledger(db)
    t0 = time.perf_counter()
    ledger.career_summary(player)
    print(f"  {'career_summary, first':<26} {(time.perf_counter() - t0) * 1000:8.1f} ms (no stored state)")
    _line("career_summary", _ms(lambda: ledger.career_summary(player), runs))
    _line("around(player, 0)", _ms(lambda: ledger.around(player, 0), runs))
    _line("get_player", _ms(lambda: ledger.get_player(player), runs))
    _line("career_page", _ms(lambda: ledger.career_page(player), runs))
    _line("career_series", _ms(lambda: ledger.career_series(player, 399), runs))
    _line(
        f"around, {len(ranks)} players",
        _once(lambda p: ledger.around(p, 0), ranks),
        "median / p99, once each",
    )
    _line(
        f"history, {len(histories)} players",
        _once(lambda p: ledger.player_history(p, 50), histories),
        "median / p99, once each",
    )
    if hasattr(ledger, "player_history_async"):  # the history route's read (this checkout)

        async def each(p: str) -> None:
            await ledger.player_history_async(p, 50)

        async def run_all() -> list[float]:
            xs = []
            for p in others:
                t0 = time.perf_counter()
                await each(p)
                xs.append((time.perf_counter() - t0) * 1000)
            await ledger.reader.close()
            return sorted(xs)

        xs = asyncio.run(run_all())
        figures = (statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.99))])
        _line(f"history async, {len(others)} players", figures, "median / p99, once each")
    db.dispose()
    with TestClient(create_app(ServiceSettings(database_url=url, rate_limit=0))) as client:
        _line("GET /players/ID", _ms(lambda: client.get(f"/players/{player}").raise_for_status(), runs))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--before", type=Path, default=None)
    parser.add_argument("--before-revision", default="0010_verify2")
    parser.add_argument("--player", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    player = args.player
    if player is None:
        player, count = busiest_near(args.database_url, args.matches)
        print(f"machine: load average {os.getloadavg()[0]:.2f}; player {player}: {count:,} matches")
    if args.before is not None:
        print(f"  -- before ({args.before})", flush=True)
        env = {**os.environ, "PYTHONPATH": str(args.before)}
        cmd = [sys.executable, __file__, "--database-url", args.database_url, "--player", player]
        with stamped(args.database_url, args.before_revision):
            subprocess.run(
                [*cmd, "--runs", str(args.runs), "--sample", str(args.sample)], env=env, check=True
            )
        print(f"  -- this checkout (load average {os.getloadavg()[0]:.2f})", flush=True)
    timed(args.database_url, player, args.runs, args.sample)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
