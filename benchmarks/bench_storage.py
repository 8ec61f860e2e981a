"""Bytes per match of the ledger: import N matches into fresh databases and measure every table and index.

The matches go through :meth:`Ledger.import_matches` (the path of ``sedma-elo import`` and of
``POST /v1/matches``), into a fresh SQLite file and a fresh PostgreSQL database, with one active
ratings version. Then each table and each index is measured:

* SQLite: the ``dbstat`` virtual table (pages of each b-tree times the page size), after a
  checkpoint; the file size is printed too;
* PostgreSQL: ``pg_relation_size`` of each table (with its TOAST) and of each index, after
  ``VACUUM``; ``pg_database_size`` too.

The source is the ATP file (``/work/shared/data/atp_1991_2017.csv.gz``: one against one) or, with
``--source league``, a synthetic league from ``benchmarks/make_league.py`` (draws and a share of
2-vs-2 team matches).

With ``--writes N`` it measures instead the cost of a repeat: N matches posted in batches of 16
through one :class:`WriterSession` (the service writer's path), then the same N again (each a
repeat, its answer derived from the stored facts), and the ratio of the two rates.

Usage::

    .venv/bin/python benchmarks/bench_storage.py [--matches 100000] [--source atp|league] \
        [--db sqlite,postgresql] [--writes 5000]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from bench_service import fresh_database

ATP = Path(os.environ.get("SEDMA_ATP", "/work/shared/data/atp_1991_2017.csv.gz"))


def _matches(source: str, count: int) -> list[object]:
    from sedma_elo.batch.history import read_matches

    if source == "atp":
        path = ATP
    else:
        path = Path(tempfile.mkdtemp()) / "league.jsonl"
        maker = Path(__file__).resolve().parent / "make_league.py"
        players = max(100, count // 10)
        cmd = [sys.executable, str(maker), str(path), "--matches", str(count), "--players", str(players)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    found, _ = read_matches(path, skip_bad=True)
    return list(itertools.islice(found, count))


def _sqlite_sizes(url: str) -> tuple[dict[str, int], int]:
    path = url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat WHERE aggregate = 1 GROUP BY name"
        ).fetchall()
    finally:
        conn.close()
    return {str(name): int(size) for name, size in rows}, os.path.getsize(path)


def _pg_sizes(url: str) -> tuple[dict[str, int], int]:
    import psycopg

    conninfo = dsn(url)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
        rows = conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid)"
            " + coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')"
        ).fetchall()
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        empty = conn.execute("SELECT pg_database_size('template1')").fetchone()
    assert total is not None and empty is not None
    return {str(name): int(size) for name, size in rows}, int(total[0]) - int(empty[0])


def measure(kind: str, matches: list[object]) -> Iterator[str]:
    """Import ``matches`` into a fresh ``kind`` database; yield the report's lines."""
    from sedma_elo.service import Ledger
    from sedma_elo.storage import open_database

    with fresh_database(kind) as url:
        ledger = Ledger(open_database(url))
        try:
            ledger.ensure_version()
            started = time.perf_counter()
            report = ledger.import_matches(matches)  # type: ignore[arg-type]
            seconds = time.perf_counter() - started
        finally:
            ledger.db.dispose()
        sizes, whole = _sqlite_sizes(url) if kind == "sqlite" else _pg_sizes(url)
        n = report.created
        yield f"== {kind}: {n:,} matches imported in {seconds:.1f} s ({n / seconds:,.0f}/s)"
        yield f"{'table or index':<44} {'bytes':>14} {'per match':>10}"
        for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
            if size:
                yield f"{name:<44} {size:>14,} {size / n:>10.1f}"
        total = sum(sizes.values())
        yield f"{'all tables and indexes':<44} {total:>14,} {total / n:>10.1f}"
        label = "database file" if kind == "sqlite" else "database size (over an empty one)"
        yield f"{label:<44} {whole:>14,} {whole / n:>10.1f}"


def writes(kind: str, matches: list[object], batch: int = 16) -> str:
    """New matches then their repeats, ``batch`` per transaction, in a fresh ``kind`` database."""
    from sedma_elo.service import Ledger
    from sedma_elo.service.payload import submission_from_match
    from sedma_elo.storage import open_database

    subs = [submission_from_match(m) for m in matches]  # type: ignore[arg-type]
    rates = []
    with fresh_database(kind) as url:
        ledger = Ledger(open_database(url))
        try:
            ledger.ensure_version()
            with ledger.writer_session() as session:
                for status in ("created", "repeat"):
                    started = time.perf_counter()
                    for i in range(0, len(subs), batch):
                        out = session.apply(subs[i : i + batch])
                    rates.append(len(subs) / (time.perf_counter() - started))
                    assert out[-1].status == status and out[-1].body, out[-1]
        finally:
            ledger.db.dispose()
    return (
        f"== {kind}: {len(subs):,} matches in batches of {batch}: new {rates[0]:,.0f}/s,"
        f" repeats {rates[1]:,.0f}/s ({rates[1] / rates[0]:.2f}x)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--source", choices=("atp", "league"), default="atp")
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--writes", type=int, default=0, help="measure N new writes and N repeats")
    args = parser.parse_args(argv)
    matches = _matches(args.source, args.writes or args.matches)
    print(f"source {args.source}: {len(matches):,} matches", flush=True)
    for kind in args.db.split(","):
        if args.writes:
            print(writes(kind, matches), flush=True)
            continue
        for line in measure(kind, matches):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
