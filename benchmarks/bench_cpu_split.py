"""Where the CPU of a match write goes: each process's CPU seconds during a wrk write run.

Seeds a fresh database (as ``bench_service.py`` does: 5,000 matches among ``--players``), starts
``sedma-elo serve`` on 127.0.0.1 (one process), warms it with 5 s of writes, then reads every
process's CPU time (Linux ``/proc``) before and after ``--duration`` seconds of ``wrk`` POSTing new
matches with 16 connections. Prints writes/s, and per role the cores used and the CPU per write:
``API process`` (the service's processes that hold its listening socket, with uvicorn's
supervisor under ``--workers N``), ``writer process`` (the service's other processes: the writer
and multiprocessing's resource tracker), ``postgres`` (the database server's processes) and any
other busy process by name; with ``--workers N`` also the API processes one by one and the
connections each holds (uvicorn's processes share one listening socket, so the split is whatever
their accepts made it). And the mean writer batch (``sedma_elo_write_batch_size`` from
``/metrics``). wrk's own CPU is not counted (it has ended by the second reading).

Usage::

    .venv/bin/python benchmarks/bench_cpu_split.py [--db sqlite|postgresql] [--duration 10] \
        [--workers 2] [--env SEDMA_ELO_WRITER_PROCESS=0]

Needs ``wrk`` (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
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


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets ``pid`` holds open (empty if it has ended or is not ours to read)."""
    found = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    found.add(target[8:-1])
    return found


#: ``/proc/net/tcp``'s codes of the two socket states read here.
LISTEN, ESTABLISHED = "0A", "01"


def tcp_inodes(port: int, state: str) -> set[str]:
    """The inodes of the IPv4 TCP sockets on local ``port`` in ``state`` (``/proc/net/tcp``)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
            found.add(fields[9])
    return found


def descendants(root: int) -> set[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


def roles(serve_pid: int, port: int) -> dict[int, str]:
    """The service's processes by role: ``API process`` if it holds the listening socket on ``port``
    (uvicorn's supervisor too, under ``--workers N``), else ``writer process``."""
    listening = tcp_inodes(port, LISTEN)
    return {
        pid: "API process" if socket_inodes(pid) & listening else "writer process"
        for pid in descendants(serve_pid)
    }


def connections_by_pid(port: int, pids: set[int]) -> dict[int, int]:
    """How many established connections to ``port`` each of ``pids`` holds."""
    established = tcp_inodes(port, ESTABLISHED)
    return {pid: len(socket_inodes(pid) & established) for pid in pids}


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
            role = roles(proc.pid, args.port)
            before, start = cpu_by_process(), time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                running = pool.submit(wrk, base, "/v1/matches", POST_LUA, args.duration, 16, env)
                time.sleep(min(2.0, args.duration / 2))  # wrk's connections are open by now
                api = {pid for pid, name in role.items() if name == "API process"}
                held = connections_by_pid(args.port, api)
                result = running.result()
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
    by_api: dict[int, int] = {}
    for pid, (name, ticks) in after.items():
        used = ticks - before.get(pid, (name, 0))[1]
        if used:
            label = role.get(pid, name)
            by_name[label] = by_name.get(label, 0) + used
            if held.get(pid):
                by_api[pid] = used
    hz = os.sysconf("SC_CLK_TCK")

    def line(label: str, ticks: int) -> str:
        cpu = ticks / hz
        return f"  {label:24s} {cpu / seconds:5.2f} cores  {cpu / writes * 1e6:6.0f} µs per write"

    for name, ticks in sorted(by_name.items(), key=lambda item: -item[1])[:6]:
        print(line(name, ticks))
    if args.workers > 1:
        for pid, conns in sorted(held.items(), key=lambda item: -item[1]):
            print(line(f"  API {pid}, {conns} conns", by_api.get(pid, 0)))


if __name__ == "__main__":
    main()
