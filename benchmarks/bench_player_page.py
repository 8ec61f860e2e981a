"""The page and the history of a 10,000-match player, before/after in one run (a benchmark, not a test).

Builds (once; reused when the database already has matches) a ledger where ``marathon`` plays
``--matches`` matches against 200 others, on SQLite (a file under ``--dir``) or on the PostgreSQL
database of ``--database-url``. Then times, through the real app in-process (TestClient),
``GET /players/marathon`` (the first page of its match list, the whole-career chart), an older
page of its list, and ``GET /v1/players/marathon/history`` (50 a page, the first and a deep page):
median and p99 milliseconds. ``--before OLD/src`` runs the same timings first with another
checkout's code in a child process, so the figures compare as a ratio on the same machine load.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_player_page.py --dir /tmp/page [--before /work/main/src]
    nice -n 5 .venv/bin/python benchmarks/bench_player_page.py --database-url postgresql+psycopg://...
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from sedma_elo.service import Ledger, MatchIn, ServiceSettings, create_app, submission_from_payload
from sedma_elo.storage import open_database

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pages import measure

PLAYER = "marathon"
START = datetime(2020, 1, 1, tzinfo=UTC)
OLDER = re.compile(r'<a href="([^"]*)" rel="next">')


def seed(url: str, matches: int) -> None:
    """``matches`` matches of PLAYER against 200 others, one a minute, random winners (seed 7)."""
    rng = random.Random(7)
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    if ledger.leaderboard(1).items:
        db.dispose()
        return
    others = [f"rival-{i:03d}" for i in range(200)]
    for start in range(0, matches, 1000):
        bodies: list[dict[str, Any]] = []
        for i in range(start, min(matches, start + 1000)):
            bodies.append(
                {
                    "match_id": f"m-{i:05d}",
                    "played_at": _at(i),
                    "player_a": PLAYER,
                    "player_b": rng.choice(others),
                    "winner": rng.choice("aab"),
                }
            )
        ledger.apply([submission_from_payload(MatchIn.model_validate(b)) for b in bodies])
        print(f"\rseeded {min(matches, start + 1000):,}/{matches:,}", end="", file=sys.stderr)
    print(file=sys.stderr)
    if db.dialect == "postgresql":  # fresh statistics, as autovacuum would have them
        with db.begin_write() as conn:
            conn.exec_driver_sql("ANALYZE")
    db.dispose()


def _at(i: int) -> str:
    """The time of match ``i``: one every 97 minutes from 2020-01-01 (about 670 days in all)."""
    return (START + timedelta(minutes=97 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pct(times: list[float], p: float) -> float:
    """The ``p`` quantile (nearest rank) of ``times``."""
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def timed(url: str, requests: int) -> None:
    """Print median/p99 of the page, an older page and the history reads."""
    with TestClient(create_app(ServiceSettings(database_url=url, rate_limit=0))) as client:
        first = client.get(f"/players/{PLAYER}")
        first.raise_for_status()
        older = [f"/players/{PLAYER}"]
        for _ in range(20):  # 20 pages back through the list's own links
            found = OLDER.search(client.get(older[-1]).text)
            if found is None:
                break
            older.append(f"/players/{PLAYER}" + found.group(1).replace("&amp;", "&"))
        hist = client.get(f"/v1/players/{PLAYER}/history?limit=50&order=desc").json()
        deep = f"/v1/players/{PLAYER}/history?limit=50&order=desc&cursor={hist['next_cursor']}"
        print(f"  page bytes {len(first.content):,}")
        rows: list[tuple[str, list[float]]] = [
            ("player page", measure(client, f"/players/{PLAYER}", requests)),
            ("player page, 20 pages back", measure(client, older[-1], requests)),
            (
                "history (asc, first page)",
                measure(client, f"/v1/players/{PLAYER}/history?limit=50", requests * 5),
            ),
            ("history (2nd page, desc)", measure(client, deep, requests * 5)),
        ]
        for name, xs in rows:
            mid, p99 = statistics.median(xs), pct(xs, 0.99)
            print(f"  {name:<28} median {mid:7.1f} ms  p99 {p99:7.1f} ms  n={len(xs)}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=Path("/tmp/page_bench"))
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--before", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    url = args.database_url or f"sqlite:///{args.dir / 'page.db'}"
    if not args.child:
        seed(url, args.matches)
        kind = url.split("://")[0]
        print(f"load average {os.getloadavg()[0]:.2f}; {kind}; {PLAYER}: {args.matches:,} matches")
    if args.before is not None and not args.child:
        print(f"  -- before ({args.before})")
        env = {**os.environ, "PYTHONPATH": str(args.before)}
        cmd = [sys.executable, __file__, "--child", "--dir", str(args.dir), "--requests", str(args.requests)]
        if args.database_url:
            cmd += ["--database-url", args.database_url]
        subprocess.run(cmd, env=env, check=True)
        print("  -- this checkout")
    timed(url, args.requests)


if __name__ == "__main__":
    main()
