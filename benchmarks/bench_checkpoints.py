"""PostgreSQL match writes just after a checkpoint, under different WAL settings of the server.

After a checkpoint, the first change of each page writes the whole page to the WAL (a full-page
image), so each commit has more to write and wait for until the hot pages have been written once.
The players' rows, the rating counts and the leaves of the rating changes' primary key (one per
player, anywhere in the index) are such pages. This starts ``sedma-elo serve`` on a fresh database
(``--players`` seeded, then ``--ledger`` more matches written through the service), and in
alternating rounds per variant: applies the variant's server settings (``ALTER SYSTEM`` and
``pg_reload_conf()``; all reset at the end), forces a ``CHECKPOINT``, and runs ``wrk`` POSTing new
matches for ``--duration`` seconds with 16 connections. Per round it prints writes/s, p99 and the
WAL written per write, with the full-page images per write (``pg_stat_wal``, the whole server's).

Variants: ``default`` (the server's settings as they are), ``lz4`` and ``zstd``
(``wal_compression``: the full-page images compressed).

This changes the server's configuration while it runs: run it on a server of its own (the local
one of a development machine), never on a shared one.

Usage::

    .venv/bin/python benchmarks/bench_checkpoints.py [--rounds 4] [--duration 15] \
        [--variants default,lz4]

Needs ``wrk`` (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from bench_service import POST_LUA, fresh_database, seed, serve, stop, wrk

VARIANTS = {"default": {}, "lz4": {"wal_compression": "lz4"}, "zstd": {"wal_compression": "zstd"}}


def _settings(admin: psycopg.Connection[tuple[object, ...]], settings: dict[str, str]) -> None:
    """Reset every setting any variant changes, then apply ``settings``; reload the server."""
    for name in sorted({n for v in VARIANTS.values() for n in v}):
        admin.execute(f"ALTER SYSTEM RESET {name}")
    for name, value in settings.items():
        admin.execute(f"ALTER SYSTEM SET {name} = '{value}'")
    admin.execute("SELECT pg_reload_conf()")


def _wal(admin: psycopg.Connection[tuple[object, ...]]) -> tuple[int, int]:
    """The server's WAL position in bytes and its full-page images so far."""
    row = admin.execute(
        "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, (SELECT wal_fpi FROM pg_stat_wal)"
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])  # type: ignore[call-overload]


def _ms(text: str) -> float:
    """A wrk latency (``416.00us``, ``12.02ms``, ``1.65s``) in milliseconds (NaN for ``?``)."""
    for unit, scale in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(unit):
            return float(text.removesuffix(unit)) * scale
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--ledger", type=int, default=20, help="seconds of writes before the rounds")
    parser.add_argument("--port", type=int, default=18_830)
    parser.add_argument("--variants", default="default,lz4")
    args = parser.parse_args()
    variants = args.variants.split(",")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    base = f"http://127.0.0.1:{args.port}"
    found: dict[str, list[tuple[float, float, float, float]]] = {v: [] for v in variants}
    with (
        fresh_database("postgresql") as url,
        psycopg.connect(dsn(url), autocommit=True) as admin,
    ):
        key = seed(url, args.players)
        proc = serve(url, args.port, 1)
        try:
            wrk(base, "/v1/matches", POST_LUA, args.ledger, 16, {"BENCH_KEY": key, "BENCH_PREFIX": "grow"})
            for r in range(args.rounds):
                for v in variants:
                    _settings(admin, VARIANTS[v])
                    admin.execute("CHECKPOINT")
                    wal0, fpi0 = _wal(admin)
                    env = {"BENCH_KEY": key, "BENCH_PREFIX": f"r{r}{v}{secrets.token_hex(2)}"}
                    got = wrk(base, "/v1/matches", POST_LUA, args.duration, 16, env)
                    wal1, fpi1 = _wal(admin)
                    writes = max(int(got["requests"]), 1)
                    row = (float(got["rps"]), _ms(got["p99"]), (wal1 - wal0) / writes, (fpi1 - fpi0) / writes)
                    found[v].append(row)
                    print(
                        f"  round {r + 1} {v:<8} {row[0]:8.0f} writes/s  p99 {got['p99']:>8}"
                        f"  WAL {row[2]:7.0f} B a write  {row[3]:5.2f} full-page images a write"
                        f"  non-2xx {got['non2xx']}"
                    )
        finally:
            stop(proc)
            _settings(admin, {})
    for v in variants:
        rows = found[v]
        print(
            f"  {v:<8} median {statistics.median(x[0] for x in rows):8.0f} writes/s,"
            f" p99 {statistics.median(x[1] for x in rows):6.1f} ms (worst {max(x[1] for x in rows):.1f}),"
            f" WAL {statistics.median(x[2] for x in rows):7.0f} B and"
            f" {statistics.median(x[3] for x in rows):5.2f} full-page images a write"
        )


if __name__ == "__main__":
    main()
