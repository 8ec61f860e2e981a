"""Where a re-rate's time goes: read, kernel, write changes, write players, commit; old code vs new.

Builds the base ledger of ``bench_bulk.py`` once per database (N ATP matches, an inactive version
2 of N/2) and keeps it (``--keep DIR``: a SQLite file there, a PostgreSQL database
``{prefix}_phases_base_{n}``) so that later runs skip the build. Then, for each code (``--after``,
default this checkout's ``src``, and ``--before SRC``), alternating ``--repeat`` times, a child
process re-rates a fresh copy of the base under ``docs/atp_fair_tuned_rules.toml`` with the
rebuild's functions wrapped in timers (wall seconds of each phase; on PostgreSQL the server's work
is in the wall of the statement that waits for it):

* ``setup``: the rebuild's reads of the standing before it (``Rebuild.__init__``) and roll-back;
* ``read``: the ledger's chunks (``read_chunks``), ``rate``: the kernel and the fold (``rate_chunk``);
* ``write``: the rating changes (``write_changes``; on branch rerate3's code on a thread, overlapping
  the others: then the phases add up to more than the wall, and ``read`` is the wait for a chunk;
  in line again since rerate4);
* ``players``: the player rows (``Rebuild.write_players``);
* ``rest``: the rest of the transaction (feed, switch) and the commit; since rerate4 on PostgreSQL
  also the index builds and the attach of the new version's partition;

and the child's peak resident memory (``ru_maxrss``) before the ``verify`` that checks the result.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_rerate_phases.py --matches 200000 --db sqlite \
        --keep /tmp/phases --before /work/main/src [--op rerate|activate] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_bulk

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN = bench_bulk.PG_ADMIN
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
PHASES = ("setup", "read", "rate", "write", "players", "rest")


def _timed(fn: Callable[..., Any], spent: dict[str, float], key: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - t0

    return wrapper


def _timed_iter(fn: Callable[..., Iterator[Any]], spent: dict[str, float], key: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        it = fn(*args, **kwargs)
        while True:
            t0 = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                spent[key] += time.perf_counter() - t0
                return
            spent[key] += time.perf_counter() - t0
            yield item

    return wrapper


def child(op: str, url: str, n: int) -> None:
    """Run ``op`` on ``url`` with the phases timed; print them as JSON."""
    from sedma_elo.core.rules import load_rules
    from sedma_elo.service import Ledger
    from sedma_elo.service.ledger import rebuild, versions
    from sedma_elo.storage import open_database

    spent = dict.fromkeys(PHASES, 0.0)
    if hasattr(rebuild, "read_chunks"):  # the code before branch rerate3: read in line
        rebuild.read_chunks = _timed_iter(rebuild.read_chunks, spent, "read")
    elif hasattr(rebuild, "ahead"):  # branch rerate3's: read by a thread, the wait for the next chunk
        rebuild.ahead = _timed_iter(rebuild.ahead, spent, "read")
    else:  # branch rerate4's: in line again, packed on SQLite
        rebuild.verify_chunks = _timed_iter(rebuild.verify_chunks, spent, "read")
    rebuild.rate_chunk = _timed(rebuild.rate_chunk, spent, "rate")  # type: ignore[assignment]
    versions.write_changes = _timed(versions.write_changes, spent, "write")  # type: ignore[assignment]
    plan = rebuild.Rebuild
    plan.__init__ = _timed(plan.__init__, spent, "setup")  # type: ignore[method-assign]
    plan.roll_back = _timed(plan.roll_back, spent, "setup")  # type: ignore[method-assign]
    plan.write_players = _timed(plan.write_players, spent, "players")  # type: ignore[method-assign]
    db = open_database(url)
    ledger = Ledger(db)
    if db.dialect == "postgresql":  # the copy's and the migrations' dirty pages, not in the timing
        with db.write.connect() as conn:
            conn.exec_driver_sql("CHECKPOINT")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if op == "rerate":
        ledger.rerate(load_rules(bench_bulk.RERATE_RULES), "bench")
        done = n
    else:
        ledger.activate(2)
        done = n - n // 2
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    spent["rest"] = wall - sum(spent[k] for k in PHASES if k != "rest")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before verify's own
    assert ledger.verify().ok
    db.dispose()
    print(json.dumps({"matches": done, "cpu": cpu, "wall": wall, "peak_mb": peak, **spent}))


def _copy(kind: str, keep: Path, prefix: str, name: str, n: int) -> str:
    if kind == "sqlite":
        shutil.copyfile(keep / "base.db", keep / f"{name}.db")
        return f"sqlite:///{keep / name}.db"
    bench_bulk._pg(f"DROP DATABASE IF EXISTS {prefix}_{name} WITH (FORCE)")
    bench_bulk._pg(f"CREATE DATABASE {prefix}_{name} TEMPLATE {prefix}_phases_base_{n}")
    return PG_URL.format(db=f"{prefix}_{name}")


def _drop(kind: str, keep: Path, prefix: str, name: str) -> None:
    if kind == "sqlite":
        for extra in ("", "-wal", "-shm", "-writer.lock"):
            Path(f"{keep / name}.db{extra}").unlink(missing_ok=True)
    else:
        bench_bulk._pg(f"DROP DATABASE IF EXISTS {prefix}_{name} WITH (FORCE)")


def _run(op: str, url: str, n: int, src: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=f"{src}{os.pathsep}{Path(__file__).resolve().parent}")
    cmd = [sys.executable, __file__, "--child", op, "--url", url, "--matches", str(n)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    figures: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return figures


def _base(kind: str, keep: Path, prefix: str, n: int, src: Path) -> None:
    """Build the kept base unless it is there (a marker file records N)."""
    marker = keep / f"{kind}.built"
    if marker.exists() and marker.read_text() == str(n):
        return
    if kind == "sqlite":
        (keep / "base.db").unlink(missing_ok=True)
        url = f"sqlite:///{keep / 'base.db'}"
    else:
        bench_bulk._pg(f"DROP DATABASE IF EXISTS {prefix}_phases_base_{n} WITH (FORCE)")
        bench_bulk._pg(f"CREATE DATABASE {prefix}_phases_base_{n}")
        url = PG_URL.format(db=f"{prefix}_phases_base_{n}")
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, bench_bulk.__file__, "--child", "build", "--url", url, "--matches", str(n)]
    subprocess.run(cmd, env=env, check=True)
    marker.write_text(str(n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--op", default="rerate", choices=("rerate", "activate"))
    parser.add_argument("--keep", type=Path, default=Path("/tmp/bench_phases"))
    parser.add_argument("--prefix", default="bench", help="PostgreSQL database names start with this")
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path, default=ROOT / "src")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--child")
    parser.add_argument("--url")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.url, args.matches)
        return
    args.keep.mkdir(parents=True, exist_ok=True)
    n = args.matches
    codes = [("after", args.after)] + ([("before", args.before)] if args.before else [])
    for kind in args.db.split(","):
        _base(kind, args.keep, args.prefix, n, args.before or args.after)
        print(f"== {kind} {args.op}, {n} matches; load average {os.getloadavg()}", flush=True)
        print("  code    " + "".join(f"{p:>9}" for p in (*PHASES, "wall", "cpu")) + "  matches/s  peak MB")
        for _ in range(args.repeat):
            for label, src in codes:
                url = _copy(kind, args.keep, args.prefix, f"phases_{label}", n)
                try:
                    f = _run(args.op, url, n, src)
                finally:
                    _drop(kind, args.keep, args.prefix, f"phases_{label}")
                row = "".join(f"{f[p]:9.2f}" for p in (*PHASES, "wall", "cpu"))
                rate = f["matches"] / f["wall"]
                print(f"  {label:7} {row}  {rate:>9,.0f}  {f.get('peak_mb', 0):7.0f}", flush=True)
        print(f"  load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
