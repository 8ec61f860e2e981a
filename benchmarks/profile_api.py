"""Attach a profiler to each API process of ``sedma-elo serve`` while wrk writes matches.

Seeds a fresh database (as ``bench_cpu_split.py`` does), starts ``serve --workers N`` on
127.0.0.1, warms it with 5 s of writes, then runs ``--duration`` seconds of wrk's unique match
writes (16 connections) and, 2 s in, attaches one profiler to every API process holding a
connection for ``--seconds``:

- ``perf-stat``: ``perf stat -e task-clock,context-switches,raw_syscalls:sys_enter`` (counts);
- ``perf-trace``: ``perf trace -s`` (system calls by name; slows the process);
- ``py-spy``: ``py-spy record --nonblocking -f raw`` at 200 Hz (collapsed Python stacks;
  ``--py-spy`` names the binary, which is not one of the project's dependencies).

Each profile goes to ``OUT/<tag>_<pid>_<connections>.txt`` (with ``--writer``, the writer
process's to ``OUT/<tag>_writer_<pid>.txt``); the script prints the writes/s and
the connections each API process held. Used for "Two API processes measured process by process"
in docs/service-measurements.md (stop 45), comparing ``--workers 1`` with ``--workers 2``.

Usage::

    .venv/bin/python benchmarks/profile_api.py --workers 2 --tool perf-stat --out /tmp/prof --tag w2

Needs ``wrk`` and the profiler; Linux only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import secrets
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cpu_split import connections_by_pid, roles
from bench_service import POST_LUA, fresh_database, seed, serve, stop, wrk


def profiler(tool: str, pid: int, seconds: int, out: Path, py_spy: str) -> list[str]:
    """The command line that profiles ``pid`` for ``seconds`` with ``tool``, writing to ``out``."""
    if tool == "perf-stat":
        events = "task-clock,context-switches,raw_syscalls:sys_enter"
        return ["perf", "stat", "-e", events, "-o", str(out), "-p", str(pid), "--", "sleep", str(seconds)]
    if tool == "perf-trace":
        return ["perf", "trace", "-s", "-o", str(out), "-p", str(pid), "--", "sleep", str(seconds)]
    rate = ["-r", "200", "-d", str(seconds), "-f", "raw"]
    return [py_spy, "record", "--nonblocking", *rate, "-p", str(pid), "-o", str(out)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="postgresql")
    parser.add_argument("--workers", type=int, default=1, help="API processes (serve --workers)")
    parser.add_argument("--tool", choices=["perf-stat", "perf-trace", "py-spy"], default="perf-stat")
    parser.add_argument("--py-spy", default="py-spy", help="the py-spy binary")
    parser.add_argument("--seconds", type=int, default=12, help="profiled seconds")
    parser.add_argument("--duration", type=int, default=20, help="seconds of writes (> --seconds + 2)")
    parser.add_argument("--out", type=Path, required=True, help="directory for the profiles")
    parser.add_argument("--tag", default="run", help="prefix of the profiles' file names")
    parser.add_argument("--port", type=int, default=18_830)
    parser.add_argument(
        "--writer", action="store_true", help="profile the writer process too (its file: writer_<pid>)"
    )
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    base = f"http://127.0.0.1:{args.port}"
    with fresh_database(args.db) as url:
        key = seed(url, 10_000)
        proc = serve(url, args.port, args.workers)
        try:
            wrk(base, "/v1/matches", POST_LUA, 5, 16, {"BENCH_KEY": key, "BENCH_PREFIX": "warm"})
            env = {"BENCH_KEY": key, "BENCH_PREFIX": f"b{secrets.token_hex(3)}"}
            role = roles(proc.pid, args.port)
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                running = pool.submit(wrk, base, "/v1/matches", POST_LUA, args.duration, 16, env)
                time.sleep(2)  # wrk's connections are open by now
                api = {pid for pid, name in role.items() if name == "API process"}
                held = {pid: n for pid, n in connections_by_pid(args.port, api).items() if n}
                targets = {pid: f"{args.tag}_{pid}_{n}" for pid, n in held.items()}
                if args.writer:
                    targets |= {
                        pid: f"{args.tag}_writer_{pid}"
                        for pid, name in role.items()
                        if name == "writer process"
                    }
                profiles = [
                    subprocess.Popen(
                        profiler(args.tool, pid, args.seconds, out / f"{name}.txt", args.py_spy),
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                    for pid, name in targets.items()
                ]
                for profile in profiles:
                    profile.wait()
                result = running.result()
        finally:
            stop(proc)
    print(f"{args.tag}: {result['rps']} writes/s, p99 {result['p99']}; connections by API process {held}")


if __name__ == "__main__":
    main()
