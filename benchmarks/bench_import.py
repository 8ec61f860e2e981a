"""``sedma-elo import`` speed: the bulk path (batch kernel + COPY / executemany) against the old one.

For each database, in one run: the ATP file's first ``--matches`` matches imported by
:meth:`Ledger.import_history` (what ``sedma-elo import`` runs) into an empty ledger; then a ledger
holding the first half gets the second half (the non-empty case); then the old path,
:meth:`Ledger.import_matches` (the group-commit batches of ``POST /v1/matches``, 1,000 matches a
transaction), on the first ``--old-matches`` matches into an empty ledger. The figures are
matches per second of wall time and of this process's CPU (on PostgreSQL the server's work is in
the wall time only); the machine's load average is printed, since the machine is shared. The
file is read once, before any timing (reading it is part of ``sedma-elo import``'s wall time:
about 1.5 s of CPU for the ATP file). ``--verify`` also runs ``verify`` on each bulk ledger.

    .venv/bin/python benchmarks/bench_import.py [--db sqlite|postgresql|both] [--matches N]
        [--old-matches N] [--history FILE] [--verify]
    .venv/bin/python benchmarks/bench_import.py --cli FILE [FILE...] [--db ...] [--before-src DIR]

``--cli`` instead runs the command itself, ``sedma-elo import FILE`` into an empty ledger, in a
child process per file and database, and prints its wall time and peak resident memory (the
child's ``ru_maxrss``): the figure that shows whether memory grows with the file. With
``--before-src`` (another checkout's ``src``, e.g. main's) each file is also imported by that
code, in the same run, for the before/after ratio.

Target: >= 30,000 matches/s on both databases (issue 13).
"""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_replay import DEFAULT_HISTORY

from sedma_elo.batch.history import HistoryArrays, read_lined
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def head(h: HistoryArrays, start: int, stop: int) -> HistoryArrays:
    """Matches ``start`` to ``stop`` of ``h`` (the same players)."""
    return h.part(slice(start, stop))


@contextmanager
def fresh(kind: str, folder: str) -> Iterator[Ledger]:
    """A ledger on a new, empty database (a SQLite file, or a PostgreSQL database dropped after)."""
    if kind == "sqlite":
        url = f"sqlite:///{folder}/bench-{secrets.token_hex(4)}.db"
        name = None
    else:
        name = f"{os.environ.get('BENCH_DB_PREFIX', 'imports_bench')}_{secrets.token_hex(4)}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    ledger = Ledger(open_database(url))
    ledger.ensure_version()
    try:
        yield ledger
    finally:
        ledger.db.dispose()
        if name is not None:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def timed(run: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU seconds of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def line(name: str, n: int, wall: float, cpu: float, base: float | None = None) -> None:
    ratio = f"{n / wall / base:9.1f}x" if base else ""
    print(f"{name:44}{n:>9,}{wall:9.1f}{n / wall:>12,.0f}{n / cpu:>12,.0f}{ratio:>10}", flush=True)


def bench(kind: str, h: HistoryArrays, n: int, old_n: int, verify: bool, folder: str) -> None:
    print(f"\n{kind}: load average {os.getloadavg()[0]:.1f}")
    print(f"{'':44}{'matches':>9}{'wall s':>9}{'/s wall':>12}{'/s CPU':>12}{'vs old':>10}")
    with fresh(kind, folder) as ledger:
        old = timed(lambda: ledger.import_matches(head(h, 0, old_n).to_matches()))
    base = old_n / old[0]
    with fresh(kind, folder) as ledger:
        empty = timed(lambda: ledger.import_history(head(h, 0, n)))
        if verify:
            print(f"  verify: {'ok' if ledger.verify().ok else 'MISMATCH'}")
    half = n // 2
    with fresh(kind, folder) as ledger:
        ledger.import_history(head(h, 0, half))
        rest = timed(lambda: ledger.import_history(head(h, half, n)))
    line("bulk import, empty ledger", n, *empty, base)
    line(f"bulk import, second half onto {half:,}", n - half, *rest, base)
    line("old path (import_matches, 1,000 a batch)", old_n, *old)


def _database(kind: str, folder: str) -> tuple[str, str | None]:
    """A URL of a new, empty database and the PostgreSQL name to drop after (None for SQLite)."""
    if kind == "sqlite":
        return f"sqlite:///{folder}/cli-{secrets.token_hex(4)}.db", None
    name = f"{os.environ.get('BENCH_DB_PREFIX', 'imports_bench')}_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", name


def cli_import(kind: str, path: Path, folder: str, src: Path | None) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak RSS (MB) and the summary line of ``sedma-elo import path`` in a child."""
    url, name = _database(kind, folder)
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [
        sys.executable,
        "-c",
        "from sedma_elo.cli import app; app()",
        "import",
        str(path),
        "--skip-bad",
    ]
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            child = subprocess.Popen([*command, "--database-url", url], env=env, stdout=out, stderr=err)
            _, status, usage = os.wait4(child.pid, 0)  # the child's own rusage: its peak RSS
            wall = time.perf_counter() - start
            out.seek(0)
            err.seek(0)
            text, problem = out.read().decode(), err.read().decode()
    finally:
        if name is not None:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    if status != 0:
        raise SystemExit(f"import failed ({status}): {problem[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, text.strip().splitlines()[-1]


def bench_cli(kinds: tuple[str, ...], files: list[Path], before: Path | None, folder: str) -> None:
    print(f"{'':14}{'wall s':>9}{'/s wall':>12}{'CPU s':>9}{'/s CPU':>12}{'peak MB':>10}")
    for kind in kinds:
        for path in files:
            print(f"\n{kind}: {path.name}: load average {os.getloadavg()[0]:.1f}", flush=True)
            for label, src in (("before", before), ("after", None)) if before else (("this code", None),):
                wall, cpu, rss, summary = cli_import(kind, path, folder, src)
                n = int(summary.split(" ", 1)[0])
                print(
                    f"  {label:12}{wall:9.1f}{n / wall:>12,.0f}{cpu:9.1f}{n / cpu:>12,.0f}{rss:>10,.0f}"
                    f"   {summary}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--matches", type=int, default=0, help="matches of the file (default: all)")
    parser.add_argument("--old-matches", type=int, default=30_000, help="matches through the old path")
    parser.add_argument("--history", type=Path, default=DEFAULT_HISTORY)
    parser.add_argument("--verify", action="store_true", help="verify each bulk-imported ledger")
    parser.add_argument("--cli", type=Path, nargs="+", help="run `sedma-elo import` on these files instead")
    parser.add_argument("--before-src", type=Path, help="with --cli: also import with this src folder")
    args = parser.parse_args()
    kinds = ("sqlite", "postgresql") if args.db == "both" else (args.db,)
    if args.cli:
        with tempfile.TemporaryDirectory() as folder:
            bench_cli(kinds, args.cli, args.before_src, folder)
        return
    h, skipped = read_lined(args.history, skip_bad=True)
    assert isinstance(h, HistoryArrays)
    n = min(args.matches or len(h), len(h))
    print(f"history: {args.history}: {len(h):,} matches ({len(skipped)} bad rows skipped); using {n:,}")
    with tempfile.TemporaryDirectory() as folder:
        for kind in ("sqlite", "postgresql") if args.db == "both" else (args.db,):
            bench(kind, h, n, min(args.old_matches, n), args.verify, folder)


if __name__ == "__main__":
    main()
