"""`sedma-elo verify` as a user runs it: wall time, matches/s and peak resident memory, before/after.

For each data set (``atp``: the ATP file, 603k one-against-one matches, a few thousand players;
``league``: a ``make_league.py`` file, e.g. 1 M matches among 500,000 players with 5% team matches)
and each database (a SQLite file, a PostgreSQL database), a ledger is built once with the CLI,
``sedma-elo import FILE --skip-bad`` then ``sedma-elo ratings rerate docs/atp_tuned_rules.toml
--no-activate`` (two versions of N matches each: verify replays 2N), and kept in ``--dir`` (and as
PostgreSQL database ``PREFIX_DATA``) for the next run unless ``--drop``.

Then ``sedma-elo verify --no-progress`` runs in a child process with the package of ``--after``
(default: this checkout's ``src``) and, with ``--before SRC``, of another checkout, alternately,
``--repeat`` times each; the figures are the child's wall time, its CPU (user + system: on
PostgreSQL the server's is not in it) and its ``ru_maxrss``. The rate
counts the N ledger matches, as ``bench_bulk.py`` does. ``imports`` is the resident size of a
process that only imports what ``verify`` imports and starts the kernel (its floor before the
first chunk).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_verify.py --league /tmp/league-1m.jsonl.gz \
        --before /work/main/src [--data atp,league] [--db sqlite,postgresql] [--dir DIR] [--upgrade]

With ``--upgrade`` the new code runs on a copy of each ledger that its own ``sedma-elo db upgrade``
migrated (a new index, say), the old code on the ledger as the old code built it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
ATP = Path(os.environ.get("SEDMA_ATP", "/work/shared/data/atp_1991_2017.csv.gz"))
RULES = ROOT / "docs" / "atp_tuned_rules.toml"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
#: The CLI's entry point, run with the package of a given ``src`` on ``PYTHONPATH``.
CLI = "import sys; from sedma_elo.cli import app; sys.argv[0] = 'sedma-elo'; app()"
#: What ``verify`` has loaded when it rates its first row (the floor of its resident size): its
#: imports and the kernel started (numba's CPU target, the first function loaded from the cache).
IMPORTS = (
    "import resource; from sedma_elo.cli import app; from sedma_elo.service.ledger import Ledger;"
    " from sedma_elo.storage import open_database; from sedma_elo.batch.kernel import _expected_table;"
    " _expected_table(); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


def run(src: Path, code: str, *args: str) -> tuple[float, float, float, str]:
    """Run ``python -c code args`` with ``src`` first on the path: wall s, CPU s, peak MB, stdout."""
    env = dict(os.environ, PYTHONPATH=str(src))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""  # to EOF first: a full pipe would block the child
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{args} failed under {src} (status {status}): {out}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def build(url: str, data: Path, src: Path) -> None:
    """Import ``data`` into the empty ledger at ``url`` and re-rate it into an inactive version 2."""
    wall, _, rss, out = run(
        src, CLI, "import", str(data), "--skip-bad", "--no-progress", "--database-url", url
    )
    print(f"  built: import {wall:.0f} s ({rss:.0f} MB): {out.strip()}", flush=True)
    wall, _, rss, out = run(
        src, CLI, "ratings", "rerate", str(RULES), "--no-activate", "--no-progress", "--database-url", url
    )
    print(f"  built: rerate {wall:.0f} s ({rss:.0f} MB): {out.strip()}", flush=True)


def _pg(sql: str) -> bool:
    """Run ``sql`` on the admin database; whether it returned a row."""
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        cur = conn.execute(sql)
        return cur.description is not None and cur.fetchone() is not None


def ledger_url(kind: str, name: str, folder: Path) -> tuple[str, bool]:
    """The URL of the kept ledger ``name`` and whether it exists already."""
    if kind == "sqlite":
        path = folder / f"{name}.db"
        return f"sqlite:///{path}", path.exists()
    exists = _pg(f"SELECT 1 FROM pg_database WHERE datname = '{name}'")
    if not exists:
        _pg(f"CREATE DATABASE {name}")
    return f"postgresql://postgres@127.0.0.1:5432/{name}", exists


def upgraded(kind: str, name: str, folder: Path, src: Path) -> str:
    """The URL of a fresh copy of ledger ``name`` upgraded by ``src``'s ``db upgrade``
    (``NAME_new``: the file copied, or a PostgreSQL database made from it as a template)."""
    new = f"{name}_new"
    if kind == "sqlite":
        shutil.copyfile(folder / f"{name}.db", folder / f"{new}.db")
        Path(f"{folder / new}.db-wal").unlink(missing_ok=True)
        target = f"sqlite:///{folder / new}.db"
    else:
        _pg(f"DROP DATABASE IF EXISTS {new} WITH (FORCE)")
        _pg(f"CREATE DATABASE {new} TEMPLATE {name}")
        target = f"postgresql://postgres@127.0.0.1:5432/{new}"
    wall = run(src, CLI, "db", "upgrade", "--database-url", target)[0]
    print(f"  upgraded a copy ({target}) in {wall:.1f} s", flush=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default="atp,league")
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--league", type=Path, help="a make_league.py file (for --data league)")
    parser.add_argument("--before", type=Path, help="src folder of the old code to compare with")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="src folder of the new code")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_verify"), help="kept SQLite ledgers")
    parser.add_argument("--prefix", default="bench_verify", help="kept PostgreSQL databases' prefix")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--drop", action="store_true", help="drop the ledgers afterwards")
    parser.add_argument(
        "--upgrade",
        action="store_true",
        help="run --after on a copy of each ledger upgraded by its own `db upgrade` (a new migration)",
    )
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    print(f"bench_verify; load average {os.getloadavg()}", flush=True)
    codes = [("after", args.after)] + ([("before", args.before)] if args.before else [])
    for label, src in codes:
        print(f"imports ({label}): {int(run(src, IMPORTS)[3]) / 1024:.0f} MB", flush=True)
    for data in args.data.split(","):
        path = ATP if data == "atp" else args.league
        if path is None:
            raise SystemExit("--data league needs --league FILE")
        for kind in args.db.split(","):
            name = f"{args.prefix}_{data}"
            url, exists = ledger_url(kind, name, args.dir)
            print(f"== {data} on {kind} ({url})", flush=True)
            if not exists:
                build(url, path, args.after)
            urls = {"after": upgraded(kind, name, args.dir, args.after) if args.upgrade else url}
            for _ in range(args.repeat):
                for label, src in codes:
                    at = urls.get(label, url)
                    wall, cpu, rss, out = run(src, CLI, "verify", "--no-progress", "--database-url", at)
                    matches = int(out.split(" matches")[0].rsplit(" ", 1)[-1])
                    print(
                        f"  verify {label:6} {matches:>9} matches {wall:7.2f} s {matches / wall:>9,.0f}/s"
                        f" {cpu:6.2f} s CPU {rss:6.0f} MB peak; load {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
            for kept in [name, f"{name}_new"] if args.drop else []:
                if kind == "sqlite":
                    for extra in ("", "-wal", "-shm", "-writer.lock"):
                        Path(f"{args.dir / kept}.db{extra}").unlink(missing_ok=True)
                else:
                    _pg(f"DROP DATABASE IF EXISTS {kept} WITH (FORCE)")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
