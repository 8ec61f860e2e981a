"""Match-write throughput of server variants, measured in alternating rounds against one database.

Each variant is a server process on 127.0.0.1 (a free port), started fresh for each round; ``wrk``
POSTs unique matches (the Lua script of ``bench_service.py``) for ``--duration`` seconds with
``--connections`` connections. Rounds alternate the variants (A B A B ...), so a load change on a
shared machine hits both alike; the summary gives each variant's median requests/s and its ratio
to the first variant.

Variants:

* ``plain``: ``create_app(settings)``, nothing process-wide changed (what tests build);
* ``tuned``: the same, after :func:`sedma_elo.service.runtime.tune_process` (what ``serve`` does:
  a short GIL switch interval and ``gc.freeze()`` once the app has started);
* ``switch-only`` / ``freeze-only``: one of the two.

Usage::

    .venv/bin/python benchmarks/bench_write_paths.py [--db sqlite|postgresql] [--rounds 3] \
        [--duration 8] [--variants plain,tuned]

Needs ``wrk`` (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import POST_LUA, fresh_database, seed, wrk

VARIANTS = ("plain", "tuned", "switch-only", "freeze-only", "one-route")


def child(variant: str, url: str, port: int) -> None:
    """Run one server variant until terminated (the benchmark's own subprocess)."""
    import uvicorn

    from sedma_elo.service import ServiceSettings, create_app, runtime

    settings = ServiceSettings(database_url=url, rate_limit=0, port=port)
    app = create_app(settings)
    if variant == "one-route":
        app.direct = None  # type: ignore[attr-defined]
    if variant != "plain":
        runtime.tune_process(
            switch_interval=variant in ("tuned", "switch-only", "one-route"),
            freeze=variant in ("tuned", "freeze-only", "one-route"),
        )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start(variant: str, url: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--child", variant, url, str(port)])
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=1):
                return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--variants", default="plain,tuned")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    variants = args.variants.split(",")
    if unknown := set(variants) - set(VARIANTS):
        sys.exit(f"unknown variants: {', '.join(sorted(unknown))} (choose from {', '.join(VARIANTS)})")
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install -y wrk)")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (shared with other jobs)")
    print(f"== {args.db}: {args.rounds} rounds of {args.duration} s, {args.connections} connections")
    rates: dict[str, list[float]] = {v: [] for v in variants}
    with fresh_database(args.db) as url:
        key = seed(url, args.players)
        for n in range(args.rounds):
            for variant in variants:
                proc, base = start(variant, url)
                try:
                    env = {"BENCH_KEY": key, "BENCH_PREFIX": f"r{n}{variant[:2]}{secrets.token_hex(2)}"}
                    r = wrk(base, "/v1/matches", POST_LUA, args.duration, args.connections, env)
                finally:
                    proc.terminate()
                    proc.wait(30)
                print(f"  round {n + 1} {variant:<12} {r['rps']:>9} req/s", end="")
                print(f"  p99 {r['p99']:>8}  non-2xx {r['non2xx']}")
                rates[variant].append(float(r["rps"]))
    first = statistics.median(rates[variants[0]])
    for variant in variants:
        med = statistics.median(rates[variant])
        print(f"  {variant:<12} median {med:9.1f} req/s  ratio to {variants[0]}: {med / first:.3f}")


if __name__ == "__main__":
    main()
