"""Where the CPU of a match write goes: each process's CPU seconds during a wrk write run.

Seeds a fresh database (as ``bench_service.py`` does: 5,000 matches among ``--players``), starts
``sedma-elo serve`` on 127.0.0.1 (one process), warms it with 5 s of writes, then reads every
process's CPU time (Linux ``/proc``) before and after ``--duration`` seconds of ``wrk`` POSTing new
matches with 16 connections. Prints writes/s, and per role the cores used, the CPU per write and
the time its threads waited on a run queue for a CPU per write (``/proc/PID/task/*/schedstat``,
kernels with scheduler statistics):
``API process`` (the service's processes that hold its listening socket, with uvicorn's
supervisor under ``--workers N``), ``writer process`` (the service's other processes: the writer
and multiprocessing's resource tracker), ``postgres`` (the database server's processes) and any
other busy process by name; with ``--workers N`` also the API processes one by one and the
connections each holds (uvicorn's processes share one listening socket, so the split is whatever
their accepts made it). And the mean writer batch (``sedma_elo_write_batch_size`` from
``/metrics``), and how many writes the service's own timing (its request-duration histogram) put
over 50 ms, beside wrk's p99: a tail that wrk sees and the service does not lies outside the span
the service times (the kernel, the event loop before the app is called, wrk itself). wrk's own
CPU is not counted (it has ended by the second reading).

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
from _proc import descendants, stat
from _proc import ticks as cpu_of  # `ticks` names a loop variable below
from bench_service import POST_LUA, fresh_database, seed, serve, stop, wrk


def cpu_by_process() -> dict[int, tuple[str, int]]:
    """Every live process: its name and its user + system CPU ticks so far."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):  # ended meanwhile
            name, fields = stat(int(entry.name))
            found[int(entry.name)] = (name, cpu_of(fields))
    return found


#: The write route as the service's metrics label it, and the p99 bound of the goal (seconds).
WRITES = "/v1/matches"
SLOW = "0.05"


def run_queue_waits() -> dict[int, int]:
    """Every live process: the nanoseconds its threads have waited on a run queue for a CPU so far
    (the second field of each ``/proc/PID/task/TID/schedstat``; a process the kernel gives no
    scheduler statistics for is left out)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError):  # ended meanwhile, or no statistics
            found[int(entry.name)] = sum(
                int((task / "schedstat").read_text().split()[1]) for task in (entry / "task").iterdir()
            )
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


def metrics_text(base: str) -> str:
    """The service's ``/metrics`` page."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        return response.read().decode()


def batch_totals(text: str) -> tuple[float, float]:
    """The writer batches' ``(sum of sizes, count)`` so far, from a ``/metrics`` page."""
    found = {"sedma_elo_write_batch_size_sum": 0.0, "sedma_elo_write_batch_size_count": 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in found:
                found[sample.name] += sample.value
    return found["sedma_elo_write_batch_size_sum"], found["sedma_elo_write_batch_size_count"]


def slow_writes(text: str, bound: str = SLOW) -> tuple[float, float]:
    """``(writes, writes over bound seconds)`` answered so far by the service's own timing (its
    request-duration histogram for ``POST /v1/matches``, from the ASGI call to the answer's last
    send), from a ``/metrics`` page; ``bound`` is one of the histogram's bucket bounds."""
    total = within = 0.0
    for family in text_string_to_metric_families(text):
        if family.name != "sedma_elo_http_request_duration_seconds":
            continue
        for sample in family.samples:
            labels = sample.labels
            if sample.name.endswith("_bucket") and labels["method"] == "POST" and labels["route"] == WRITES:
                if labels["le"] == "+Inf":
                    total += sample.value
                elif labels["le"] == bound:
                    within += sample.value
    return total, total - within


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
            page_before = metrics_text(base)
            role = roles(proc.pid, args.port)
            before, waits_before, start = cpu_by_process(), run_queue_waits(), time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                running = pool.submit(wrk, base, "/v1/matches", POST_LUA, args.duration, 16, env)
                time.sleep(min(2.0, args.duration / 2))  # wrk's connections are open by now
                api = {pid for pid, name in role.items() if name == "API process"}
                held = connections_by_pid(args.port, api)
                result = running.result()
            after, waits_after, seconds = cpu_by_process(), run_queue_waits(), time.monotonic() - start
            page_after = metrics_text(base)
        finally:
            stop(proc)
    writes = int(result["requests"])
    print(
        f"  {result['rps']} writes/s, p99 {result['p99']}, non-2xx {result['non2xx']},"
        f" steal {result['steal']}"
    )
    sizes, count = (
        after_ - before_
        for after_, before_ in zip(batch_totals(page_after), batch_totals(page_before), strict=True)
    )
    if count:
        print(f"  {count:.0f} writer batches, {sizes / count:.1f} matches per batch")
    timed, slow = (
        after_ - before_
        for after_, before_ in zip(slow_writes(page_after), slow_writes(page_before), strict=True)
    )
    # Under --workers N serve turns prometheus-client's multiprocess mode on: the page sums them all.
    print(
        f"  the service's own timing: {slow:.0f} of {timed:.0f} writes over {float(SLOW) * 1e3:.0f} ms"
        f" (wrk's p99 {result['p99']}: 1% of its requests took longer)"
    )
    by_name: dict[str, int] = {}
    waited: dict[str, int] = {}
    by_api: dict[int, int] = {}
    for pid, (name, ticks) in after.items():
        used = ticks - before.get(pid, (name, 0))[1]
        if used:
            label = role.get(pid, name)
            by_name[label] = by_name.get(label, 0) + used
            waited[label] = waited.get(label, 0) + waits_after.get(pid, 0) - waits_before.get(pid, 0)
            if held.get(pid):
                by_api[pid] = used
    hz = os.sysconf("SC_CLK_TCK")

    def line(label: str, ticks: int, wait: int | None = None) -> str:
        cpu = ticks / hz
        text = f"  {label:24s} {cpu / seconds:5.2f} cores  {cpu / writes * 1e6:6.0f} µs per write"
        return text if wait is None else f"{text}  {wait / writes / 1e3:5.0f} µs waiting for a CPU"

    for name, ticks in sorted(by_name.items(), key=lambda item: -item[1])[:6]:
        print(line(name, ticks, waited.get(name)))
    if args.workers > 1:
        for pid, conns in sorted(held.items(), key=lambda item: -item[1]):
            print(line(f"  API {pid}, {conns} conns", by_api.get(pid, 0)))


if __name__ == "__main__":
    main()
