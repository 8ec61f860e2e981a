"""Where the CPU of a match write goes: each process's CPU seconds during a wrk write run.

Seeds a fresh database (as ``bench_service.py`` does: 5,000 matches among ``--players``), starts
``sedma-elo serve`` on 127.0.0.1 (one process), warms it with 5 s of writes, then reads every
process's CPU time (Linux ``/proc``) before and after ``--duration`` seconds of ``wrk`` POSTing new
matches with 16 connections. Prints writes/s, and per process name (``sedma-elo``: the API process;
``python``: its writer process; ``postgres``: the database server's processes) the cores used and
the CPU per write, and the mean writer batch (``sedma_elo_write_batch_size`` from ``/metrics``).
wrk's own CPU is not counted (it has ended by the second reading). ``--workers N`` runs N API
processes sharing one writer process (``serve --workers N``); the API processes are then named
``python`` too.

Usage::

    .venv/bin/python benchmarks/bench_cpu_split.py [--db sqlite|postgresql] [--duration 10] \
        [--workers 2] [--env SEDMA_ELO_WRITER_PROCESS=0]

Needs ``wrk`` (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import sys
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import POST_LUA, fresh_database, seed, serve, stop, wrk


def cpu_by_process() -> dict[int, tuple[str, int]]:
    """Every live process: its name and its user + system CPU ticks so far."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):  # ended meanwhile
            raw = (entry / "stat").read_text()
            name = raw[raw.index("(") + 1 : raw.rindex(")")]
            fields = raw.rsplit(")", 1)[1].split()
            found[int(entry.name)] = (name, int(fields[11]) + int(fields[12]))
    return found


def batch_totals(base: str) -> tuple[float, float]:
    """The writer batches' ``(sum of sizes, count)`` so far, from the service's ``/metrics``."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = {"sedma_elo_write_batch_size_sum": 0.0, "sedma_elo_write_batch_size_count": 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in found:
                found[sample.name] += sample.value
    return found["sedma_elo_write_batch_size_sum"], found["sedma_elo_write_batch_size_count"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=18_820)
    parser.add_argument("--workers", type=int, default=1, help="API processes (serve --workers)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="for serve")
    args = parser.parse_args()
    extra = dict(pair.split("=", 1) for pair in args.env)
    base = f"http://127.0.0.1:{args.port}"
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {args.db};"
        f" {args.workers} API process(es); {extra or ''}"
    )
    with fresh_database(args.db) as url:
        key = seed(url, args.players)
        proc = serve(url, args.port, args.workers, **extra)
        try:
            wrk(base, "/v1/matches", POST_LUA, 5, 16, {"BENCH_KEY": key, "BENCH_PREFIX": "warm"})
            env = {"BENCH_KEY": key, "BENCH_PREFIX": f"b{secrets.token_hex(3)}"}
            batches_before = batch_totals(base)
            before, start = cpu_by_process(), time.monotonic()
            result = wrk(base, "/v1/matches", POST_LUA, args.duration, 16, env)
            after, seconds = cpu_by_process(), time.monotonic() - start
            batches_after = batch_totals(base)
        finally:
            stop(proc)
    writes = int(result["requests"])
    print(
        f"  {result['rps']} writes/s, p99 {result['p99']}, non-2xx {result['non2xx']},"
        f" steal {result['steal']}"
    )
    sizes, count = (after_ - before_ for after_, before_ in zip(batches_after, batches_before, strict=True))
    if count:
        print(f"  {count:.0f} writer batches, {sizes / count:.1f} matches per batch")
    by_name: dict[str, int] = {}
    for pid, (name, ticks) in after.items():
        used = ticks - before.get(pid, (name, 0))[1]
        if used:
            by_name[name] = by_name.get(name, 0) + used
    hz = os.sysconf("SC_CLK_TCK")
    for name, ticks in sorted(by_name.items(), key=lambda item: -item[1])[:6]:
        cpu = ticks / hz
        print(f"  {name:16s} {cpu / seconds:5.2f} cores  {cpu / writes * 1e6:6.0f} µs per write")


if __name__ == "__main__":
    main()
