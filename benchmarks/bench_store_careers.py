"""First views of busy players' pages, without and with their summaries stored after a bulk change.

On a large PostgreSQL ledger (``--database-url``, e.g. a league kept by ``bench_league10m.py
--keep-db``), for the active version:

1. how many players have at least 100, 300, 1,000, 3,000 and 10,000 matches;
2. every stored career state deleted; ``GET /players/ID`` (in process, through the app) of the
   player closest to ``--page-matches`` and of ``--sample`` random players with at least
   ``--min-matches`` matches, each once (their first view: the summary folds the whole career and
   stores it), then each once more (the next view: from the stored state);
3. the states deleted again; ``Ledger.store_careers(--min-matches)`` timed (what ``import``,
   ``ratings rerate``, ``activate`` and ``void`` now run at their end); then the same first views.

With ``--before OLD/src`` (a checkout of an earlier release), only ``store_careers`` is timed, on
PostgreSQL or SQLite: ``--runs`` times for each code, alternating, each in a fresh process on a
cleared table, with its CPU time and peak memory; the states both write are compared (a digest of
every stored row).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_store_careers.py --database-url postgresql+psycopg://... \
        [--min-matches 1000] [--sample 30] [--page-matches 10000] [--before OLD/src --runs 3]

It deletes the database's ``career_states`` (a cache: page reads store them again).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from bench_league10m import busiest_near


def _views(get: Callable[[str], None], players: list[str]) -> list[float]:
    """Milliseconds of one view of each player's page, in order."""
    xs = []
    for p in players:
        t0 = time.perf_counter()
        get(p)
        xs.append((time.perf_counter() - t0) * 1000)
    return xs


def _line(name: str, xs: list[float]) -> None:
    s = sorted(xs)
    print(
        f"  {name:<40} median {statistics.median(s):7.1f}  max {s[-1]:7.1f} ms"
        f"  (the {len(s)} pages; first: {xs[0]:.1f} ms)",
        flush=True,
    )


def _clear(conninfo: str) -> None:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("DELETE FROM career_states")


def _child_store(url: str, min_matches: int) -> None:
    """Time ``store_careers`` on a cleared table in this process (either database); print it as
    JSON with a digest of the stored states."""
    from sedma_elo.service import Ledger
    from sedma_elo.storage import open_database

    db = open_database(url, migrate=False)
    with db.begin_write() as conn:
        conn.exec_driver_sql("DELETE FROM career_states")
    t0, c0 = time.perf_counter(), time.process_time()
    stored = Ledger(db).store_careers(min_matches)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    digest = hashlib.sha256()
    with db.read.connect() as conn:
        sql = "SELECT version_id, player_key, through, rewrites, state FROM career_states ORDER BY 1, 2"
        for row in conn.exec_driver_sql(sql):
            digest.update(repr(tuple(row)).encode())
    db.dispose()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"stored": stored, "wall": wall, "cpu": cpu, "peak_mb": peak, "digest": digest.hexdigest()}
    print(json.dumps(out))


def _compare(args: argparse.Namespace) -> None:
    """``store_careers`` of ``--before`` and of this checkout, ``--runs`` times each, alternating."""
    here = str(Path(__file__).resolve().parents[1] / "src")
    codes = {"before": str(Path(args.before).resolve()), "now": here}
    print(f"machine: load average {os.getloadavg()[0]:.2f}; {args.runs} runs each, alternating")
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
    digests: dict[str, set[str]] = {name: set() for name in codes}
    for _ in range(args.runs):
        for name, src in codes.items():
            env = {**os.environ, "PYTHONPATH": src}
            cmd = [sys.executable, __file__, "--database-url", args.database_url, "--child-store"]
            cmd += ["--min-matches", str(args.min_matches)]
            out = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
            digests[name].add(out.pop("digest"))
            seen[name].append(out)
            print(
                f"  {name:<6} {out['stored']:,} states in {out['wall']:.2f} s ({out['cpu']:.2f} s CPU),"
                f" peak {out['peak_mb']:.0f} MB",
                flush=True,
            )
    medians = {name: statistics.median(r["wall"] for r in runs) for name, runs in seen.items()}
    same = digests["before"] == digests["now"] and len(digests["now"]) == 1
    print(
        f"  median: before {medians['before']:.2f} s, now {medians['now']:.2f} s"
        f" = {medians['now'] / medians['before']:.2f}x; stored states identical: {same}"
    )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--min-matches", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=30)
    parser.add_argument("--page-matches", type=int, default=10_000)
    parser.add_argument("--before", default=None, help="an earlier release's src/: compare store_careers")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child-store", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_store:
        _child_store(args.database_url, args.min_matches)
        return
    if args.before:
        _compare(args)
        return

    from fastapi.testclient import TestClient

    from sedma_elo.service import Ledger, ServiceSettings, create_app
    from sedma_elo.storage import open_database

    conninfo = dsn(args.database_url)
    page_player, page_matches = busiest_near(args.database_url, args.page_matches)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        vid = conn.execute("SELECT id FROM rating_versions WHERE active").fetchone()
        assert vid is not None
        counts = {
            t: conn.execute(
                "SELECT count(*) FROM player_ratings WHERE version_id = %s AND matches_played >= %s",
                (vid[0], t),
            ).fetchone()
            for t in (100, 300, 1000, 3000, 10_000)
        }
        busy = [
            r[0]
            for r in conn.execute(
                "SELECT player_id FROM player_ratings WHERE version_id = %s AND matches_played >= %s"
                " ORDER BY player_id",
                (vid[0], args.min_matches),
            )
        ]
    print(f"machine: load average {os.getloadavg()[0]:.2f}; version {vid[0]}")
    print(
        "  players with at least N matches: " + ", ".join(f"{t:,}: {c[0]:,}" for t, c in counts.items() if c)
    )
    others = [p for p in busy if p != page_player]
    sample = [page_player, *random.Random(5).sample(others, min(args.sample, len(others)))]
    print(
        f"  pages: {page_player} ({page_matches:,} matches) and {len(sample) - 1} random players"
        f" of the {len(busy):,}"
    )

    with TestClient(create_app(ServiceSettings(database_url=args.database_url, rate_limit=0))) as client:

        def get(p: str) -> None:
            client.get(f"/players/{p}").raise_for_status()

        get(sample[-1])  # the app's own first request (imports, pools) is not a page's cost
        _clear(conninfo)
        _line("no state stored: first views", _views(get, sample))
        _line("no state stored: next views", _views(get, sample))
        _clear(conninfo)
        db = open_database(args.database_url, migrate=False)
        t0 = time.perf_counter()
        stored = Ledger(db).store_careers(args.min_matches)
        took = time.perf_counter() - t0
        db.dispose()
        print(
            f"  store_careers({args.min_matches}): {stored:,} players in {took:.1f} s"
            f" ({took / max(stored, 1) * 1000:.0f} ms a player)",
            flush=True,
        )
        _line("states stored: first views", _views(get, sample))
        _line("states stored: next views", _views(get, sample))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
