"""Load benchmark of the rating service with wrk (a separate process) against a real server.

For each database (SQLite file, and a fresh PostgreSQL database on 127.0.0.1:5432):

1. seed the ledger through the normal import path: ``--players`` players (default 100,000), each in
   one match, so the leaderboard has that many rows;
2. for each ``--workers`` count in turn (``1,2,2,1``: a steady drift of the machine's speed or of
   the growing ledger's falls on both counts alike, where ``1,2,1,2`` puts it on 2): measure the
   bare-ASGI ceiling, an app that only reads and parses the JSON body, under the same uvicorn
   settings and the same wrk script as the match writes (printed as ``bare ASGI``); then
3. start ``sedma-elo serve`` on 127.0.0.1 with the rate limit off;
4. ``wrk`` POSTs unique matches among the first 10,000 players (Lua script below) with 16
   connections (with ``--minimal``, then new matches again asking ``Prefer: return=minimal``, the
   answers' summary), then repeats of seeded matches (the same body again), then reads the
   leaderboard (limit 50) and single players;
5. print requests/s, p50 and p99 latency and the count of non-2xx answers, the writes' ratio to the
   ceiling of their round (the mean over the rounds of a process count), repeats against new
   writes, and each other process count's mean writes/s against the first's (also as the ratio of
   their ratios to the ceilings); run ``sedma-elo verify``.

Usage::

    .venv/bin/python benchmarks/bench_service.py [--db sqlite|postgresql|both] [--duration 10] \
        [--workers 1,2,2,1] [--minimal]
    .venv/bin/python benchmarks/bench_service.py --metrics-cost 3   # the metrics middleware's cost
    .venv/bin/python benchmarks/bench_service.py --reads-only --workers 1,2   # reads, cache off then on
    .venv/bin/python benchmarks/bench_service.py --reads-only --read-cache on --mixed 2 \
        --before /work/main/src        # reads while 2 connections write; main's code, then this one

Needs ``wrk`` on the PATH: ``sudo apt-get install -y wrk`` (Debian, Ubuntu), ``brew install wrk``
(macOS), or build it from https://github.com/wg/wrk.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import psycopg
from _wrk import run as run_wrk
from _wrk import write_lua

from sedma_elo.core.model import Match
from sedma_elo.service import Ledger
from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database

SEDMA_ELO = str(Path(sys.executable).with_name("sedma-elo"))
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"

#: The issue's goal for match writes, per process count (the means of its rounds; p99 < 50 ms is
#: each round's own line): writes/s, and writes against the bare-ASGI ceiling of their round.
GOAL_WRITES = 2500.0
GOAL_RATIO = 0.10

#: Unique matches among the first 10,000 players (p000001...p010000).
POST_LUA = write_lua("p%06d", first=1)

# Repeats of the seeded matches (the same body again: 200 with the first answer). seed() stores
# seed-i for odd i as p<i> against p<i+1>, won by a.
REPEAT_LUA = r"""
function request()
  local i = 2 * math.random(0, 4999) + 1
  local body = string.format(
    '{"match_id":"seed-%d","player_a":"p%06d","player_b":"p%06d","winner":"a"}', i, i, i + 1)
  return wrk.format("POST", "/v1/matches", {["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY")}, body)
end
"""

PLAYER_LUA = r"""
function request()
  return wrk.format("GET", string.format("/v1/players/p%06d", math.random(1, 10000)))
end
"""


def seed(url: str, players: int) -> str:
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    matches = [
        Match.single(f"p{i:06d}", f"p{i + 1:06d}", "a" if i % 4 else "b", match_id=f"seed-{i}")
        for i in range(1, players, 2)
    ]
    t0 = time.perf_counter()
    report = ledger.import_matches(matches, batch=5000)
    print(f"  seeded {report.created} matches / {players} players in {time.perf_counter() - t0:.1f} s")
    key, _ = create_key(db, "write", "bench")
    db.dispose()
    return key


def wrk(
    base: str, path: str, lua: str | None, duration: int, connections: int, env: dict[str, str]
) -> dict[str, str]:
    """One wrk run (see :func:`_wrk.run`)."""
    return run_wrk(base, path, lua, duration, connections, env)


def report(name: str, r: dict[str, str]) -> None:
    """One wrk run's line; the answers that were not 2xx on a line of their own, by status and route."""
    print(
        f"  {name:<13}: {r['rps']:>9} req/s  p50 {r['p50']:>8}  p99 {r['p99']:>8}  "
        f"non-2xx {r['non2xx']}  socket errors {r['socket_errors']}  steal {r['steal']}"
    )
    if r.get("refused"):
        print(f"  {'':<13}  not 2xx: {r['refused']}")


def ledger_size(base: str) -> int:
    with urllib.request.urlopen(f"{base}/healthz", timeout=10) as resp:
        return int(json.loads(resp.read())["ledger_size"])


def port_free(port: int) -> None:
    """Exit if something already listens on ``port`` (a benchmark would measure that instead)."""
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            sys.exit(f"port {port} is in use: stop what listens there or pass --port")


def started(
    cmd: list[str], health: str, env: dict[str, str] | None = None, cpus: set[int] | None = None
) -> subprocess.Popen[bytes]:
    """Run ``cmd`` in its own process group (on ``cpus``, if given) and wait until ``health`` answers."""
    pin = None if cpus is None else lambda: os.sched_setaffinity(0, cpus)
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, preexec_fn=pin)
    for _ in range(3000):  # five minutes: a loaded machine (load 20) started two processes in 115 s
        try:
            # 10 s: /healthz counts the ledger, 2.3 s for 10 M matches at load 10 (a 1 s timeout
            # failed every try, and the 10 M league's wrk part never started).
            with urllib.request.urlopen(health, timeout=10):
                return proc
        except OSError:
            time.sleep(0.1)
    stop(proc)
    raise RuntimeError(f"{cmd[1]} did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server started by :func:`started` and every process it started (its group)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    while True:  # the group's other processes (uvicorn's workers) may outlive the supervisor
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def serve(
    url: str, port: int, workers: int, cpus: set[int] | None = None, **extra_env: str
) -> subprocess.Popen[bytes]:
    """``sedma-elo serve`` with the rate limit off, its processes on ``cpus`` (the writer process
    on its own ``SEDMA_ELO_WRITER_CPUS`` if ``extra_env`` gives them)."""
    port_free(port)
    env = {**os.environ, "SEDMA_ELO_RATE_LIMIT": "0", **extra_env}
    cmd = [SEDMA_ELO, "serve", "--database-url", url, "--port", str(port), "--workers", str(workers)]
    return started(cmd, f"http://127.0.0.1:{port}/healthz", env, cpus)


#: ``--pin``: the writer process and the database server on the first CPU, the API processes (and
#: the bare-ASGI ceiling's app) on the others: docs/service-measurements.md, "A fast hour, and the
#: order of the rounds".
WRITER_CPUS = {0}


def api_cpus() -> set[int]:
    """The CPUs ``--pin`` leaves to the API processes: all but :data:`WRITER_CPUS`."""
    return set(range(os.cpu_count() or 1)) - WRITER_CPUS or WRITER_CPUS


def writer_cpus_env() -> dict[str, str]:
    """The variable that puts ``serve``'s writer process on :data:`WRITER_CPUS` (``--pin``)."""
    return {"SEDMA_ELO_WRITER_CPUS": ",".join(map(str, sorted(WRITER_CPUS)))}


@contextmanager
def database_server_on(cpus: set[int]) -> Iterator[None]:
    """The PostgreSQL server's processes on ``cpus`` (a backend started meanwhile inherits them from
    the postmaster), every CPU again afterwards. Needs the right to set another user's affinity."""

    def server_processes() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                if entry.name.isdigit() and (entry / "comm").read_text().strip() == "postgres":
                    found.append(int(entry.name))
        return found

    def pin_all(target: set[int]) -> None:
        for pid in server_processes():
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(pid, target)

    try:
        pin_all(cpus)
    except PermissionError:
        sys.exit("--pin sets the PostgreSQL server's CPUs: run it as root (or as the server's user)")
    try:
        yield
    finally:
        pin_all(set(range(os.cpu_count() or 1)))


@contextmanager
def fresh_database(kind: str) -> Iterator[str]:
    """A new, empty database of ``kind`` (a SQLite file or a PostgreSQL database), dropped after use.

    The PostgreSQL database is named ``$BENCH_DB_PREFIX_<random>`` (default prefix ``sedma_elo_bench``).
    """
    tmp = tempfile.mkdtemp()
    pg_name = None
    if kind == "sqlite":
        url = f"sqlite:///{tmp}/bench.db"
    else:
        pg_name = f"{os.environ.get('BENCH_DB_PREFIX', 'sedma_elo_bench')}_{secrets.token_hex(4)}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{pg_name}"')
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{pg_name}"
    try:
        yield url
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if pg_name:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')


def ceiling_app() -> Any:
    """The bare-ASGI ceiling: an app that reads the body, parses its JSON and answers a small 201."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # lifespan: nothing to start
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        data = json.loads(b"".join(chunks) or b"{}")
        body = json.dumps({"match_id": data.get("match_id")}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def serve_ceiling(port: int, cpus: set[int] | None = None) -> subprocess.Popen[bytes]:
    """Start the ceiling app under uvicorn as ``serve`` runs it (same loop, parser, log settings),
    on ``cpus`` if given (those of the API processes it stands for)."""
    port_free(port)
    cmd = [sys.executable, __file__, "--ceiling-child", str(port)]
    return started(cmd, f"http://127.0.0.1:{port}/", cpus=cpus)


def ceiling(args: argparse.Namespace) -> float:
    """Requests/s of the bare-ASGI ceiling under the match-write wrk script."""
    proc = serve_ceiling(args.port, api_cpus() if args.pin else None)
    try:
        env = {"BENCH_KEY": "none", "BENCH_PREFIX": "c"}
        r = wrk(
            f"http://127.0.0.1:{args.port}", "/v1/matches", POST_LUA, args.duration, args.connections, env
        )
    finally:
        stop(proc)
    report("bare ASGI", r)
    return rate(r)


def rate(r: dict[str, str]) -> float:
    return float(r["rps"]) if r["rps"] != "?" else float("nan")


def bench(kind: str, args: argparse.Namespace) -> None:
    """One database: the ceiling, then writes, repeats and reads for each process count."""
    pinned = f"; --pin: writer and server on CPUs {WRITER_CPUS}, API on {api_cpus()}" if args.pin else ""
    print(
        f"== {kind} ({args.players} players, {args.connections} connections, {args.duration} s each{pinned})"
    )
    server = database_server_on(WRITER_CPUS) if args.pin and kind == "postgresql" else nullcontext()
    with fresh_database(kind) as url, server:
        key = seed(url, args.players)
        counts = [int(n) for n in str(args.workers).split(",")] if args.workers else [1]
        if args.reads_only:
            reads_only(url, key, args)
            return
        if args.metrics_cost:
            metrics_cost(url, key, counts[0], args)
            return
        # The ceiling is measured again before each round: this machine's CPU speed moves by the
        # minute (9,610 and 14,437/s within an hour), so a ratio to a ceiling measured once drifts.
        rounds: list[tuple[int, float, float]] = []
        summaries: list[tuple[int, float, float]] = []  # --minimal: the same for the summary answers
        for workers in counts:
            top = ceiling(args)
            print(f"  -- {workers} process{'es' if workers > 1 else ''}")
            full, minimal = served(url, key, workers, args)
            rounds.append((workers, full, top))
            summaries.append((workers, minimal, top))
        if args.minimal:
            for workers in dict.fromkeys(counts):
                mine = [(w, t) for n, w, t in summaries if n == workers]
                print(
                    f"  writes/s with Prefer: return=minimal, {workers} process(es):"
                    f" {statistics.mean(w for w, _ in mine):.0f}"
                    f" = {statistics.mean(w / t for w, t in mine):.4f}x the ceiling (mean of {len(mine)};"
                    " the goal below is the full answer's)"
                )
        means: dict[int, float] = {}
        for workers in dict.fromkeys(counts):
            mine = [(new, top) for n, new, top in rounds if n == workers]
            means[workers] = statistics.mean(w for w, _ in mine)
            ratio = statistics.mean(w / t for w, t in mine)
            # Four decimals: at three, a mean of 0.0995 printed as 0.100x (12-06), as if it met 0.10.
            each = ", ".join(f"{w:.0f}/s = {w / t:.4f}x" for w, t in mine)
            met = means[workers] >= GOAL_WRITES and ratio >= GOAL_RATIO
            print(
                f"  writes/s, {workers} process(es): {means[workers]:.0f} = {ratio:.4f}x the bare-ASGI"
                f" ceiling measured just before (mean of {len(mine)}: {each});"
                f" >= {GOAL_WRITES:,.0f}/s and >= {GOAL_RATIO:.2f}x: {'met' if met else 'NOT met'}"
            )
        first = counts[0]
        for other in [n for n in means if n != first]:
            # Against the first count's rounds, also per round's ceiling: the machine's speed and
            # the ledger's size drift through a run (``1,2,2,1`` puts a steady drift on both alike).
            against = means[other] / means[first]
            scaled = _ceiling_ratio(rounds, other) / _ceiling_ratio(rounds, first)
            print(
                f"  writes/s, {other} processes against {first}: {against:.3f}x (means),"
                f" {scaled:.3f}x (ratios to their ceilings);"
                f" not slower: {'met' if against >= 1 else 'NOT met'}"
            )
        verify = subprocess.run([SEDMA_ELO, "verify", "--database-url", url], capture_output=True, text=True)
        print(f"  verify: exit {verify.returncode}: {' '.join(verify.stdout.split())}")


def _ceiling_ratio(rounds: list[tuple[int, float, float]], workers: int) -> float:
    """The mean of ``workers``' rounds' writes over the ceiling measured just before each."""
    return statistics.mean(w / t for n, w, t in rounds if n == workers)


def served(url: str, key: str, workers: int, args: argparse.Namespace) -> tuple[float, float]:
    """Writes, repeats, leaderboard and player reads against ``serve --workers workers``: new
    writes/s, and with ``--minimal`` new writes/s asking the summary answer (else NaN)."""
    if args.pin:
        proc = serve(url, args.port, workers, api_cpus(), **writer_cpus_env())
    else:
        proc = serve(url, args.port, workers)
    base = f"http://127.0.0.1:{args.port}"
    minimal = float("nan")
    try:
        env = {"BENCH_KEY": key, "BENCH_PREFIX": f"b{secrets.token_hex(3)}"}
        before = ledger_size(base)
        w = wrk(base, "/v1/matches", POST_LUA, args.duration, args.connections, env)
        report("match writes", w)
        print(f"  {w['requests']} write requests answered; the ledger grew by {ledger_size(base) - before}")
        if args.minimal:
            prefer = {**env, "BENCH_PREFIX": f"m{secrets.token_hex(3)}", "BENCH_PREFER": "return=minimal"}
            m = wrk(base, "/v1/matches", POST_LUA, args.duration, args.connections, prefer)
            report("minimal writes", m)
            minimal = rate(m)
        r = wrk(base, "/v1/matches", REPEAT_LUA, args.duration, args.connections, env)
        report("repeats", r)
        print(f"  repeats/s against new writes/s: {rate(r) / rate(w):.3f}x")
        read_phase(base, args)
    finally:
        stop(proc)
    return rate(w), minimal


def read_phase(base: str, args: argparse.Namespace) -> None:
    """Leaderboard pages (limit 50) and single players (random among the first 10,000).

    With ``--reads-only`` the players are read a second time (``player again``): with the read
    cache on, the first run fills it (10,000 answers), the second shows a warm process.
    """
    d, c = args.duration, args.connections
    report("leaderboard", wrk(base, "/v1/leaderboard?limit=50", None, d, c, {}))
    report("player reads", wrk(base, "/v1/players/p000001", PLAYER_LUA, d, c, {}))
    if args.reads_only:
        report("player again", wrk(base, "/v1/players/p000001", PLAYER_LUA, d, c, {}))


def reads_only(url: str, key: str, args: argparse.Namespace) -> None:
    """``--reads-only``: the read phase for each process count, code and read-cache setting, in turn.

    With ``--before SRC`` each setting runs first with the code in ``SRC`` (``PYTHONPATH``), then
    with this checkout's; with ``--mixed N``, N connections post new matches during the reads.
    """
    counts = [int(n) for n in str(args.workers).split(",")]
    caches = ["off", "on"] if args.read_cache == "both" else [args.read_cache]
    codes = [("before", {"PYTHONPATH": args.before}), ("this code", {})] if args.before else [("", {})]
    for workers in counts:
        for cache in caches:
            for code, env in codes:
                label = f", {code}" if code else ""
                print(f"  -- {workers} process{'es' if workers > 1 else ''}, read cache {cache}{label}")
                extra = {"SEDMA_ELO_READ_CACHE_SIZE": "0"} if cache == "off" else {}
                proc = serve(url, args.port, workers, **extra, **env)
                try:
                    base = f"http://127.0.0.1:{args.port}"
                    if args.mixed:
                        mixed_phase(base, key, args)
                    else:
                        read_phase(base, args)
                finally:
                    stop(proc)


def mixed_phase(base: str, key: str, args: argparse.Namespace) -> None:
    """The read phase while ``args.mixed`` connections post new matches (wrk in a second process)."""
    phases = 3  # leaderboard, player reads, player again
    env = {"BENCH_KEY": key, "BENCH_PREFIX": f"x{secrets.token_hex(3)}"}
    writes: dict[str, dict[str, str]] = {}

    def write() -> None:
        d = phases * args.duration + 1
        writes["w"] = wrk(base, "/v1/matches", POST_LUA, d, args.mixed, env)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        read_phase(base, args)
    finally:
        writer.join()
    report("writes meanwhile", writes["w"])


def metrics_cost(url: str, key: str, workers: int, args: argparse.Namespace) -> None:
    """Match writes/s with the metrics middleware off and on, alternating, ``args.metrics_cost`` rounds."""
    base = f"http://127.0.0.1:{args.port}"
    rates: dict[str, list[float]] = {"false": [], "true": []}
    for i in range(args.metrics_cost):
        for metrics in ("false", "true") if i % 2 == 0 else ("true", "false"):
            proc = serve(url, args.port, workers, SEDMA_ELO_METRICS=metrics)
            try:
                env = {"BENCH_KEY": key, "BENCH_PREFIX": f"b{secrets.token_hex(3)}"}
                w = wrk(base, "/v1/matches", POST_LUA, args.duration, args.connections, env)
            finally:
                stop(proc)
            report(f"metrics {metrics:<5}", w)
            rates[metrics].append(float(w["rps"]) if w["rps"] != "?" else float("nan"))
    off, on = statistics.median(rates["false"]), statistics.median(rates["true"])
    print(f"  median writes/s: metrics off {off:.0f}, on {on:.0f}; on/off = {on / off:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument(
        "--workers", default="1", help="API processes, or a list measured in turn in the same run (1,2)"
    )
    parser.add_argument("--port", type=int, default=18_777)
    parser.add_argument("--ceiling-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--reads-only", action="store_true", help="seed, then only the leaderboard and player reads"
    )
    parser.add_argument(
        "--read-cache",
        choices=["on", "off", "both"],
        default="both",
        help="with --reads-only: the read cache on, off (SEDMA_ELO_READ_CACHE_SIZE=0) or both in turn",
    )
    parser.add_argument(
        "--before", metavar="SRC", help="with --reads-only: also serve the code in SRC (PYTHONPATH) first"
    )
    parser.add_argument(
        "--mixed",
        type=int,
        default=0,
        metavar="N",
        help="with --reads-only: N connections post new matches during the reads",
    )
    parser.add_argument(
        "--metrics-cost",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="instead: match writes with SEDMA_ELO_METRICS off and on, alternating, ROUNDS times each",
    )
    parser.add_argument(
        "--minimal",
        action="store_true",
        help="also post new matches with `Prefer: return=minimal` (the answers' summary) in each round",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the writer process and the PostgreSQL server on CPU 0, the API processes and the"
        " ceiling's app on the others (SEDMA_ELO_WRITER_CPUS; the server's processes need root)",
    )
    args = parser.parse_args()
    if args.ceiling_child:
        import uvicorn

        uvicorn.run(
            ceiling_app(), host="127.0.0.1", port=args.ceiling_child, access_log=False, log_level="warning"
        )
        return
    if shutil.which("wrk") is None:
        sys.exit(
            "wrk is not installed: on Debian or Ubuntu `sudo apt-get install -y wrk`; elsewhere see https://github.com/wg/wrk"
        )
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (shared with other jobs)")
    for kind in ("sqlite", "postgresql") if args.db == "both" else (args.db,):
        bench(kind, args)


if __name__ == "__main__":
    main()
