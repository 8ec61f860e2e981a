"""In which order should a re-rate insert its rating changes? Chunk by chunk (main), by sequence, or
the whole version sorted by primary key (appends to the clustered key's b-tree).

A table shaped like ``rating_changes`` (clustered primary key ``(version_id, player_key,
sequence)``, secondary index ``(version_id, sequence, rating_before)``) already holding one
version of ``2 N`` changes (N matches, two players each, keys drawn at random among 20,000 players)
takes a second version of the same size, in one transaction, in each order in turn (twice):

* ``chunk``: chunks of ``--chunk`` changes in sequence order, each sorted by primary key (what
  ``bulk.write_changes`` does with each chunk of a rebuild);
* ``seq``: the same chunks unsorted (the secondary index takes appends);
* ``sorted``: the whole version sorted by primary key, in slices of 100,000 (appends at the
  key's right edge: SQLite's b-tree append, PostgreSQL's rightmost-leaf fast path).

SQLite: the inserting process's CPU (``process_time``: SQLite runs in it) with the 64 MB page cache
of a rebuild (``--cache-kib``). PostgreSQL: the server backend's CPU (``/proc/PID/stat``, this
machine's server), the WAL written and the growth of both indexes. Wall times are printed too;
on a shared machine compare the CPU.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_change_order.py --matches 600000 [--db sqlite,postgresql]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from _proc import cpu_ticks

from sedma_elo.service.ledger.bulk import copy_binary

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
TABLE = (
    "CREATE TABLE rc (version_id integer, player_key integer, sequence bigint, rating_before integer"
    " NOT NULL, rating_after integer NOT NULL, PRIMARY KEY (version_id, player_key, sequence))"
)
INDEX = "CREATE INDEX ix ON rc (version_id, sequence, rating_before)"
ORDERS = ("chunk", "seq", "sorted")


def changes(n: int, players: int = 20_000) -> np.ndarray[Any, np.dtype[np.int64]]:
    """``(seq, key, before, after)`` of ``n`` one-against-one matches, in sequence order."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, players, n)
    b = (a + rng.integers(1, players, n)) % players
    out = np.empty((2 * n, 4), dtype=np.int64)
    out[0::2, 0] = out[1::2, 0] = np.arange(1, n + 1)
    out[0::2, 1], out[1::2, 1] = a, b
    out[:, 2], out[:, 3] = 1500, 1510
    return out


def parts(ch: np.ndarray[Any, Any], order: str, chunk: int) -> list[np.ndarray[Any, Any]]:
    """The insert statements' rows in ``order``."""
    if order == "sorted":
        whole = ch[np.argsort(ch[:, 1], kind="stable")]
        return [whole[at : at + 100_000] for at in range(0, len(whole), 100_000)]
    out = [ch[at : at + chunk] for at in range(0, len(ch), chunk)]
    return [p[np.lexsort((p[:, 0], p[:, 1]))] for p in out] if order == "chunk" else out


def run_sqlite(ch: np.ndarray[Any, Any], chunk: int, cache_kib: int, orders: tuple[str, ...]) -> None:
    sql = "INSERT INTO rc VALUES (?, ?, ?, ?, ?)"

    def insert(conn: sqlite3.Connection, vid: int, part: np.ndarray[Any, Any]) -> None:
        v = np.full(len(part), vid)
        conn.executemany(sql, np.column_stack([v, part[:, 1], part[:, 0], part[:, 2], part[:, 3]]).tolist())

    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "rc.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(TABLE + " WITHOUT ROWID")
        conn.execute(INDEX)
        conn.execute("BEGIN")
        for p in parts(ch, "chunk", chunk):
            insert(conn, 1, p)
        conn.execute("COMMIT")
        conn.execute(f"PRAGMA cache_size = {-cache_kib}")
        vid = 2
        for _ in range(2):
            for order in orders:
                cpu0, t0 = time.process_time(), time.perf_counter()
                conn.execute("BEGIN")
                for p in parts(ch, order, chunk):
                    insert(conn, vid, p)
                conn.execute("COMMIT")
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
                load = os.getloadavg()[0]
                print(f"  sqlite   {order:7} {cpu:6.2f} s CPU {wall:7.2f} s wall  load {load:.1f}")
                vid += 1
        conn.close()


def _backend_cpu(pid: int) -> float:
    return cpu_ticks(pid) / os.sysconf("SC_CLK_TCK")


def run_pg(ch: np.ndarray[Any, Any], chunk: int, name: str) -> None:
    widths = (4, 4, 8, 4, 4)

    def copy(conn: psycopg.Connection[Any], vid: int, part: np.ndarray[Any, Any]) -> None:
        v = np.full(len(part), vid)
        data = copy_binary([v, part[:, 1], part[:, 0], part[:, 2], part[:, 3]], widths)
        with conn.cursor() as cur, cur.copy("COPY rc FROM STDIN (FORMAT binary)") as cp:
            cp.write(data)

    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(PG_ADMIN.rsplit("/", 1)[0] + f"/{name}", autocommit=True) as conn:
            conn.execute(TABLE)
            conn.execute(INDEX + " INCLUDE (player_key)")
            for p in parts(ch, "chunk", chunk):
                copy(conn, 1, p)
            conn.execute("VACUUM ANALYZE rc")
            pid = int(conn.execute("SELECT pg_backend_pid()").fetchone()[0])  # type: ignore[index]

            def size(rel: str) -> int:
                return int(conn.execute("SELECT pg_relation_size(%s)", (rel,)).fetchone()[0])  # type: ignore[index]

            vid = 2
            for _ in range(2):
                for order in ORDERS:
                    lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]  # type: ignore[index]
                    pk0, ix0 = size("rc_pkey"), size("ix")
                    cpu0, t0 = _backend_cpu(pid), time.perf_counter()
                    with conn.transaction():
                        for p in parts(ch, order, chunk):
                            copy(conn, vid, p)
                    cpu, wall = _backend_cpu(pid) - cpu0, time.perf_counter() - t0
                    wal = float(
                        conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", (lsn,)).fetchone()[0]  # type: ignore[index]
                    )
                    print(
                        f"  postgres {order:7} {cpu:6.2f} s server CPU {wall:7.2f} s wall"
                        f"  WAL {wal / 1e6:5.0f} MB  key +{(size('rc_pkey') - pk0) / 1e6:3.0f} MB"
                        f"  index +{(size('ix') - ix0) / 1e6:3.0f} MB"
                        f"  load {os.getloadavg()[0]:.1f}"
                    )
                    vid += 1
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--matches", type=int, default=600_000)
    parser.add_argument("--chunk", type=int, default=40_000, help="changes per chunk (a rebuild's: ~40,000)")
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--cache-kib", type=int, default=65_536, help="SQLite's page cache (a rebuild's)")
    parser.add_argument("--orders", default=",".join(ORDERS))
    parser.add_argument("--database", default=f"bench_order_{os.getpid()}", help="PostgreSQL database to use")
    args = parser.parse_args()
    ch = changes(args.matches)
    print(f"bench_change_order: {len(ch):,} changes a version; load average {os.getloadavg()}")
    if "sqlite" in args.db:
        run_sqlite(ch, args.chunk, args.cache_kib, tuple(args.orders.split(",")))
    if "postgresql" in args.db:
        run_pg(ch, args.chunk, args.database)


if __name__ == "__main__":
    main()
