"""Real writers beside a flood of random Bearer tokens (issue 12 row 2): do they keep their throughput?

For each database (a SQLite file, and a fresh PostgreSQL database on 127.0.0.1:5432):

1. start ``sedma-elo serve`` on 127.0.0.1 (one process, the per-key rate limit off, the default
   limits of failed key checks on) and create one write key;
2. ``--writers`` (8) closed-loop writers POST unique matches for ``--duration`` seconds, alone;
3. the same again while another process sends ``--flood`` (1000) requests/s to ``POST /v1/matches``,
   each with a new random ``sk_`` token, over 16 keep-alive connections;
4. steps 2 and 3 alternate (alone, flood, flood, alone, ... ``--rounds`` pairs); print the
   acknowledged writes/s each way, their ratio (flood / alone, medians) and what the flood got
   back (401, 429...);
5. the flood alone for ``--duration`` s: the server's CPU time (user + system, from ``/proc``)
   per flood request, the cost that does not depend on how busy the machine is; then run
   ``sedma-elo verify``.

The goal (issue 12): real writers keep at least 0.5 of their throughput. The clients are plain
asyncio HTTP/1.1 over keep-alive sockets (no wrk needed); they share the machine with the server,
so absolute figures are low on a 2-core machine; the ratio is the figure to read.

Usage::

    .venv/bin/python benchmarks/bench_key_flood.py [--db sqlite|postgresql|both] [--duration 8]
    PYTHONPATH=/path/to/older/src .venv/bin/python benchmarks/bench_key_flood.py   # an older version
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import secrets
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _proc import cpu_ticks
from bench_service import SEDMA_ELO, fresh_database, serve

from sedma_elo.service import Ledger
from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database


async def _request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int, key: str, body: bytes
) -> int:
    """Send one ``POST /v1/matches`` on a keep-alive connection; return the status code."""
    head = (
        f"POST /v1/matches HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    status_line = await reader.readline()
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    await reader.readexactly(length)
    return int(status_line.split()[1])


def _match(match_id: str, i: int) -> bytes:
    a, b = i % 997, (i * 7 + 1) % 997
    if a == b:
        b = (b + 1) % 997
    return json.dumps(
        {
            "match_id": match_id,
            "player_a": f"p{a:04d}",
            "player_b": f"p{b:04d}",
            "winner": "ab"[i % 2],
            "stats": {"a": {"won_by_16": i % 3}, "b": {"bad_moves": i % 4}},
        }
    ).encode()


async def _writers(port: int, key: str, n: int, duration: float, prefix: str) -> tuple[int, Counter[int]]:
    """``n`` closed-loop writers for ``duration`` s: (acknowledged writes, statuses)."""
    statuses: Counter[int] = Counter()
    deadline = time.monotonic() + duration

    async def one(w: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        i = 0
        try:
            while time.monotonic() < deadline:
                statuses[await _request(reader, writer, port, key, _match(f"{prefix}-{w}-{i}", i + w))] += 1
                i += 1
        finally:
            writer.close()

    await asyncio.gather(*(one(w) for w in range(n)))
    return statuses[200] + statuses[201], statuses


async def _flood_async(port: int, rate: float, duration: float, connections: int) -> Counter[int]:
    statuses: Counter[int] = Counter()
    start = time.monotonic()
    body = _match("flood", 1)

    async def one(c: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        sent = 0
        try:
            while (now := time.monotonic()) < start + duration:
                due = start + (sent * connections + c) / rate  # paced: rate/connections per connection
                if due > now:
                    await asyncio.sleep(due - now)
                statuses[await _request(reader, writer, port, "sk_" + secrets.token_urlsafe(32), body)] += 1
                sent += 1
        finally:
            writer.close()

    await asyncio.gather(*(one(c) for c in range(connections)))
    return statuses


def _flood(port: int, rate: float, duration: float, out: multiprocessing.Queue[dict[int, int]]) -> None:
    out.put(dict(asyncio.run(_flood_async(port, rate, duration, 16))))


def _round(port: int, key: str, args: argparse.Namespace, flood: bool) -> float:
    prefix = f"w{secrets.token_hex(4)}"
    proc = None
    queue: multiprocessing.Queue[dict[int, int]] = multiprocessing.Queue()
    if flood:
        proc = multiprocessing.Process(target=_flood, args=(port, args.flood, args.duration + 2, queue))
        proc.start()
        time.sleep(1.0)  # the flood is under way before the writers start
    acked, statuses = asyncio.run(_writers(port, key, args.writers, args.duration, prefix))
    rate = acked / args.duration
    line = f"  {'flood' if flood else 'alone':<5}: {rate:8.0f} writes/s ({dict(sorted(statuses.items()))})"
    if proc is not None:
        got = queue.get(timeout=60)
        proc.join(30)
        sent = sum(got.values())
        line += f"; flood sent {sent / (args.duration + 2):.0f} req/s, answers {dict(sorted(got.items()))}"
    print(line, flush=True)
    return rate


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` and its threads (Linux ``/proc``)."""
    return cpu_ticks(pid) / os.sysconf("SC_CLK_TCK")


def _flood_cost(pid: int, port: int, args: argparse.Namespace) -> None:
    queue: multiprocessing.Queue[dict[int, int]] = multiprocessing.Queue()
    before = _cpu_seconds(pid)
    proc = multiprocessing.Process(target=_flood, args=(port, args.flood, args.duration, queue))
    proc.start()
    got = queue.get(timeout=120)
    proc.join(30)
    cpu = _cpu_seconds(pid) - before
    sent = sum(got.values())
    print(
        f"  flood alone: {sent / args.duration:.0f} req/s, answers {dict(sorted(got.items()))};"
        f" server CPU {cpu:.2f} s = {cpu / max(sent, 1) * 1e6:.0f} us per flood request",
        flush=True,
    )


def bench(kind: str, args: argparse.Namespace) -> float:
    print(f"== {kind}: {args.writers} writers, {args.duration} s a round, flood {args.flood:.0f} req/s")
    with fresh_database(kind) as url:
        db = open_database(url)
        Ledger(db).ensure_version()
        key, _ = create_key(db, "write", "bench")
        db.dispose()
        proc = serve(url, args.port, 1)
        rates: dict[bool, list[float]] = {False: [], True: []}
        try:
            for i in range(args.rounds):
                for flood in (False, True) if i % 2 == 0 else (True, False):
                    rates[flood].append(_round(args.port, key, args, flood))
            _flood_cost(proc.pid, args.port, args)
        finally:
            proc.terminate()
            proc.wait(30)
        alone, flooded = statistics.median(rates[False]), statistics.median(rates[True])
        ratio = flooded / alone if alone else float("nan")
        print(f"  median writes/s: alone {alone:.0f}, beside the flood {flooded:.0f}; ratio {ratio:.2f}")
        verify = subprocess.run([SEDMA_ELO, "verify", "--database-url", url], capture_output=True, text=True)
        print(f"  verify: exit {verify.returncode}: {' '.join(verify.stdout.split())}")
        return ratio


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds of writing per round")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of rounds (alone and beside the flood)")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--flood", type=float, default=1000.0, help="random-token requests per second")
    parser.add_argument("--port", type=int, default=18_778)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (shared with other jobs)")
    for kind in ("sqlite", "postgresql") if args.db == "both" else (args.db,):
        bench(kind, args)


if __name__ == "__main__":
    main()
