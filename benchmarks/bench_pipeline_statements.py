"""CPU per statement of a pipeline: client and PostgreSQL server, one connection, two ways.

Runs ``--batches`` transactions (``BEGIN``, N ``SELECT %s::int``, ``COMMIT``, then a sync) for N in
``--statements``, each way in alternating rounds (each twice), and prints per transaction the
client's CPU (``process_time``), the server backend's CPU (``/proc/<pid>/stat``, so Linux and a
server on this machine only) and the wall time. The growth from one N to the next, over the
statements added, is the cost of one more statement. The two ways:

* ``psycopg``: psycopg's ``Connection.pipeline()``, each statement by ``execute`` (prepared), as the
  batch writer sent its statements until 2026-12-06;
* ``pipe``: the writer's :class:`sedma_elo.service.ledger.pg_pipe.Pipe`, the statements queued on
  libpq's pipeline and sent together (what write_pg.py does now).

Usage::

    .venv/bin/python benchmarks/bench_pipeline_statements.py [--statements 1,5,15] [--batches 2000]
"""

from __future__ import annotations

import argparse
import os
import time

import psycopg
from _proc import cpu_ticks

from sedma_elo.service.ledger.pg_pipe import Pipe

PG = "postgresql://postgres@127.0.0.1:5432/postgres"


def server_seconds(pid: int) -> float:
    """User + system CPU seconds of the server backend ``pid`` so far."""
    return cpu_ticks(pid) / os.sysconf("SC_CLK_TCK")


def by_psycopg(conn: psycopg.Connection[tuple[int]], statements: int) -> None:
    """One transaction through psycopg's pipeline."""
    with conn.pipeline():
        conn.execute("BEGIN", prepare=False)
        for i in range(statements):
            conn.execute("SELECT %s::int", (i,), prepare=True)
        conn.execute("COMMIT", prepare=False)


def by_pipe(conn: psycopg.Connection[tuple[int]], statements: int) -> None:
    """One transaction through the writer's pipe."""
    with Pipe(conn) as pipe:
        pipe.execute("BEGIN")
        for i in range(statements):
            pipe.execute("SELECT %s::int", (i,))
        pipe.execute("COMMIT")
        pipe.sync()


WAYS = {"psycopg": by_psycopg, "pipe": by_pipe}


def run(
    conn: psycopg.Connection[tuple[int]], way: str, statements: int, batches: int
) -> tuple[float, float, float]:
    """Client CPU, server CPU and wall time per transaction, in µs (after 100 unmeasured)."""
    pid = conn.info.backend_pid
    for _ in range(100):
        WAYS[way](conn, statements)
    cpu, server, wall = time.process_time(), server_seconds(pid), time.perf_counter()
    for _ in range(batches):
        WAYS[way](conn, statements)
    done = (time.process_time() - cpu, server_seconds(pid) - server, time.perf_counter() - wall)
    return (done[0] * 1e6 / batches, done[1] * 1e6 / batches, done[2] * 1e6 / batches)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--statements", default="1,5,15")
    parser.add_argument("--batches", type=int, default=2000)
    args = parser.parse_args()
    counts = [int(n) for n in args.statements.split(",")]
    print(f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}), libpq {psycopg.pq.version()}")
    for _ in range(2):
        for n in counts:
            for way in WAYS:
                with psycopg.connect(PG, autocommit=True) as conn:
                    client, server, wall = run(conn, way, n, args.batches)
                print(
                    f"{way:8s} {n:3d} statements: client {client:6.0f} µs, server {server:6.0f} µs,"
                    f" wall {wall:6.0f} µs"
                )


if __name__ == "__main__":
    main()
