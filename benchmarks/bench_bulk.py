"""The ledger's bulk paths: re-rate, void, activate and verify on N matches of the ATP file.

For each database (a SQLite file and a PostgreSQL database) a base ledger is built once:

1. the first N/2 matches imported (``Ledger.import_matches``, the path of ``sedma-elo import``),
2. ``rerate(docs/atp_tuned_rules.toml, activate=False)``: an inactive version 2 holding N/2,
3. the other N/2 imported: version 1 (active) holds all N.

Then each operation runs on a fresh copy of the base (a file copy; ``CREATE DATABASE ... TEMPLATE``)
in a child process (so its CPU and its peak resident memory, ``ru_maxrss``, are its own):

* ``rerate``: ``rerate(docs/atp_fair_tuned_rules.toml)`` into version 3: N matches;
* ``void``: void the match at sequence N/2 + 1: version 1 rebuilt from there, N/2 matches;
* ``activate``: activate version 2, which catches up the N/2 matches it lacks;
* ``verify``: the base's two versions (N + N/2 replayed; the rate counts the N ledger matches).

Each reports matches per second (wall) and the CPU seconds of the operation (``process_time`` in
the child: on PostgreSQL the server's own CPU is not in it). The ceiling is the batch kernel's own
replay of the same N matches under the same rules in this process (``run_kernel`` on arrays read
from the file); ``op CPU / kernel CPU`` says how far the database part is from it.

``--after SRC`` (default: this checkout's ``src``) and ``--before SRC`` choose the code: the
children import the package from there. ``--before`` runs every operation a second time with the
package from another checkout's ``src`` (e.g. ``/work/main/src``, the per-match fold path) on its
own copy of the same base, and prints the before/after ratios. ``--inline`` adds a third run of
the new code with a rebuild's reading and writing threads off (``versions.rebuild_reader`` patched
to give none: everything in line, as on SQLite), for code that has them (branch rerate3 to
rerate4's fc03dc6; since rerate4 a rebuild is in line anyway). ``--repeat K`` runs each
operation's variants K times, alternating. On PostgreSQL each child runs ``CHECKPOINT`` before
the timed operation (after its migrations, if any): the copy's and the migrations' dirty pages are
not written during the timing.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_bulk.py --matches 100000 [--db sqlite,postgresql] \
        [--before /work/main/src] [--ops rerate,void,activate,verify]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ATP = Path(os.environ.get("SEDMA_ATP", "/work/shared/data/atp_1991_2017.csv.gz"))
INACTIVE_RULES = ROOT / "docs" / "atp_tuned_rules.toml"
RERATE_RULES = ROOT / "docs" / "atp_fair_tuned_rules.toml"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
# Two runs at once must not share databases; BENCH_DB_PREFIX names a session's own.
PREFIX = f"{os.environ.get('BENCH_DB_PREFIX', 'bulk_bench')}_{os.getpid()}"


# ---------------------------------------------------------------------------- child: one operation
def child(op: str, url: str, n: int) -> None:
    """Run one operation on ``url`` and print its figures as JSON (this process's own CPU)."""
    from sedma_elo.core.rules import load_rules
    from sedma_elo.service import Ledger
    from sedma_elo.storage import open_database

    if op == "build":
        build_base(url, n)
        return
    if op == "kernel":
        print(json.dumps({"cpu": kernel_ceiling(n, RERATE_RULES)}))
        return
    db = open_database(url)
    ledger = Ledger(db)
    if os.environ.get("BENCH_INLINE"):
        _inline()
    if db.dialect == "postgresql":
        with db.write.connect() as conn:
            conn.exec_driver_sql("CHECKPOINT")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if op == "rerate":
        ledger.rerate(load_rules(RERATE_RULES), "bench")
        done = n
    elif op == "void":
        ledger.void(_match_id_at(url, n // 2 + 1), "bench")
        done = n - n // 2
    elif op == "activate":
        ledger.activate(2)
        done = n - n // 2
    else:
        report = ledger.verify()
        assert report.ok, report.mismatches[:5]
        done = report.matches
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    db.dispose()
    import sedma_elo

    print(json.dumps({"matches": done, "cpu": cpu, "wall": wall, "code": sedma_elo.__file__}))


def _inline() -> None:
    """A rebuild without its reading and writing threads (PostgreSQL): all in line, on one connection."""
    from sedma_elo.service.ledger import versions

    @contextmanager
    def no_readers(*_: Any) -> Iterator[None]:
        yield None

    versions.rebuild_reader = no_readers  # type: ignore[assignment]


def _match_id_at(url: str, seq: int) -> str:
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        found = conn.execute(text("SELECT match_id FROM matches WHERE sequence = :s"), {"s": seq}).scalar()
    engine.dispose()
    return str(found)


# ---------------------------------------------------------------------------- parent
def _pg(sql: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(sql)


def build_base(url: str, n: int) -> None:
    """Build the base ledger (see the module docstring) on ``url``, an empty database."""
    from sedma_elo.batch.history import read_matches
    from sedma_elo.core.rules import load_rules
    from sedma_elo.service import Ledger
    from sedma_elo.storage import open_database

    matches, _ = read_matches(ATP, skip_bad=True)
    matches = matches[:n]
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    t0 = time.perf_counter()
    first = ledger.import_matches(matches[: n // 2], batch=5000)
    ledger.rerate(load_rules(INACTIVE_RULES), "inactive", activate=False)
    second = ledger.import_matches(matches[n // 2 :], batch=5000)
    assert first.created + second.created == n, (first.refused[:3], second.refused[:3])
    print(json.dumps({"built": time.perf_counter() - t0}))
    db.dispose()
    if url.startswith("sqlite"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()


@contextmanager
def copy_of(kind: str, base: str, tmp: Path, name: str) -> Iterator[str]:
    """A fresh copy of the base ledger, dropped afterwards."""
    if kind == "sqlite":
        path = tmp / f"{name}.db"
        shutil.copyfile(base.removeprefix("sqlite:///"), path)
        try:
            yield f"sqlite:///{path}"
        finally:
            for extra in ("", "-wal", "-shm", "-writer.lock"):
                Path(f"{path}{extra}").unlink(missing_ok=True)
        return
    db = f"{PREFIX}_{name}"
    _pg(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    _pg(f"CREATE DATABASE {db} TEMPLATE {PREFIX}_base")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
    finally:
        _pg(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def run_child(op: str, url: str, n: int, src: Path, inline: bool = False) -> dict[str, Any]:
    """Run ``op`` in a child process importing the package from ``src``; add its ``ru_maxrss`` (MB)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    if inline:
        env["BENCH_INLINE"] = "1"
    cmd = [sys.executable, __file__, "--child", op, "--url", url, "--matches", str(n)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""  # to EOF first: a full pipe would block the child
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{op} failed under {src}: {out}")
    figures: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    figures["rss_mb"] = usage.ru_maxrss / 1024
    return figures


def kernel_ceiling(n: int, rules_path: Path, repeat: int = 5) -> float:
    """CPU seconds of the kernel's own replay of the first ``n`` matches (best of ``repeat``)."""
    import numpy as np

    from sedma_elo.batch.history import HistoryArrays, load_history
    from sedma_elo.batch.kernel import run_kernel
    from sedma_elo.core.rules import load_rules

    full, _ = load_history(ATP, skip_bad=True)
    h = HistoryArrays(
        full.player_ids,
        full.player_a[:n],
        full.player_b[:n],
        full.winner[:n],
        full.counts[:n],
        full.match_ids[:n],
        full.played_at[:n],
        full.lines[:n],
    )
    rules = load_rules(rules_path)
    best = float("inf")
    for _ in range(repeat):
        ratings = np.full(h.n_players, rules.initial_rating, dtype=np.int64)
        games = np.zeros(h.n_players, dtype=np.int64)
        t0 = time.process_time()
        run_kernel(h, rules, ratings, games, record=True)
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--ops", default="rerate,void,activate,verify")
    parser.add_argument("--before", type=Path, help="src folder of the old code to compare with")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="src folder of the new code")
    parser.add_argument("--inline", action="store_true", help="also the new code without the threads")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each operation's variants")
    parser.add_argument("--child")
    parser.add_argument("--url")
    args = parser.parse_args()
    n = args.matches
    if args.child:
        child(args.child, args.url, n)
        return
    print(f"bench_bulk: {n} ATP matches; load average {os.getloadavg()}", flush=True)
    own = args.after
    kernel = float(run_child("kernel", "", n, own)["cpu"])
    print(f"kernel's own replay of {n} matches: {kernel * 1000:.1f} ms CPU ({n / kernel:,.0f} matches/s)")
    for kind in args.db.split(","):
        print(f"== {kind}", flush=True)
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            if kind == "sqlite":
                base = f"sqlite:///{tmp}/base.db"
            else:
                _pg(f"DROP DATABASE IF EXISTS {PREFIX}_base WITH (FORCE)")
                _pg(f"CREATE DATABASE {PREFIX}_base")
                base = f"postgresql+psycopg://postgres@127.0.0.1:5432/{PREFIX}_base"
            # Built by the older code when there is one: the newer code upgrades its copy (its
            # migrations run when it opens the database, outside the timing); the older one could
            # not open a schema newer than its own.
            built = run_child("build", base, n, args.before or own)
            print(
                f"  base ledger built in {built['built']:.0f} s ({built['rss_mb']:.0f} MB peak)", flush=True
            )
            try:
                for op, _ in [(op, r) for op in args.ops.split(",") for r in range(args.repeat)]:
                    runs = [("after", own)] + ([("inline", own)] if args.inline else [])
                    runs += [("before", args.before)] if args.before else []
                    got = {}
                    for label, src in runs:
                        with copy_of(kind, base, tmp, f"{op}_{label}") as url:
                            got[label] = f = run_child(op, url, n, src, label == "inline")
                        rate = f["matches"] / f["wall"]
                        print(
                            f"  {op:8} {label:6} {f['matches']:>8} matches  {f['wall']:7.2f} s wall"
                            f"  {rate:>9,.0f} matches/s  {f['cpu']:7.2f} s CPU  {f['rss_mb']:6.0f} MB peak"
                            + (f"  ({f['cpu'] / kernel * n / f['matches']:.0f}x the kernel's CPU)")
                            + f"  load {os.getloadavg()[0]:.2f}",
                            flush=True,
                        )
                    if "before" in got:
                        a, b = got["after"], got["before"]
                        print(
                            f"  {op:8} before/after: {b['cpu'] / a['cpu']:.1f}x less CPU,"
                            f" {b['wall'] / a['wall']:.1f}x less wall time",
                            flush=True,
                        )
            finally:
                if kind != "sqlite":
                    _pg(f"DROP DATABASE IF EXISTS {PREFIX}_base WITH (FORCE)")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
