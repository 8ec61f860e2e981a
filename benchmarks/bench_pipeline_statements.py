"""CPU per statement of psycopg's pipeline mode: client and PostgreSQL server, one connection.

Runs ``--batches`` transactions of N ``SELECT %s::int`` statements each in one pipeline (as the
batch writer sends its statements, write_pg.py), for N in ``--statements`` (alternating rounds, each
twice), and prints per transaction the client's CPU (``process_time``), the server backend's CPU
(``/proc/<pid>/stat``, so Linux and a server on this machine only) and the wall time. The growth
from one N to the next, over the statements added, is the cost of one more statement.

Usage::

    .venv/bin/python benchmarks/bench_pipeline_statements.py [--statements 1,5,15] [--batches 2000]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import psycopg

PG = "postgresql://postgres@127.0.0.1:5432/postgres"


def server_seconds(pid: int) -> float:
    """User + system CPU seconds of the server backend ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(conn: psycopg.Connection[tuple[int]], statements: int, batches: int) -> tuple[float, float, float]:
    """Client CPU, server CPU and wall time per transaction, in µs."""
    pid = conn.info.backend_pid
    cpu, server, wall = time.process_time(), server_seconds(pid), time.perf_counter()
    for _ in range(batches):
        with conn.pipeline(), conn.transaction():
            for i in range(statements):
                conn.execute("SELECT %s::int", (i,))
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
    with psycopg.connect(PG, autocommit=True) as conn:
        print(f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}), libpq {psycopg.pq.version()}")
        for n in counts * 2:
            client, server, wall = run(conn, n, args.batches)
            print(f"{n:3d} statements: client {client:6.0f} µs, server {server:6.0f} µs, wall {wall:6.0f} µs")


if __name__ == "__main__":
    main()
