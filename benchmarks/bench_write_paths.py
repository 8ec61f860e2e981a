"""Match-write throughput of server variants, measured in alternating rounds against one database.

Each variant is a server process on 127.0.0.1 (``--port``), started fresh for each round; ``wrk``
POSTs unique matches (the Lua script of ``bench_service.py``) for ``--duration`` seconds with
``--connections`` connections. Rounds alternate the variants (A B A B ...), so a load change on a
shared machine hits both alike; the summary gives each variant's median requests/s and the server
process's median CPU time per request (``/proc``: less disturbed by other jobs than requests/s),
each with its ratio to the first variant.

Variants:

* ``plain``: ``create_app(settings)``, nothing process-wide changed (what tests build);
* ``tuned``: the same tuned as ``serve`` tunes it, :func:`sedma_elo.service.runtime.tune_process`
  with ``freeze=True`` (``gc.freeze()`` once the app has started), with ``serve``'s writer process;
* ``unfrozen``: ``tuned`` without ``gc.freeze()`` (what ``serve`` ran between stops 38 and 40 on
  2026-12-06, the same as ``plain``);
* ``short-switch``: ``tuned`` with the 0.1 ms GIL switch interval (``serve`` until 2026-12-02);
* ``switch-only``: the 0.1 ms interval without ``gc.freeze()``;
* ``commit-checkpoints``: ``tuned`` with SQLite's WAL checkpointed by the commits that pass 1,000
  pages (SQLite's default, and the service's until 2026-12-02) instead of a thread of its own
  (``WAL_CHECKPOINT_SECONDS=0``);
* ``writer-thread``: ``tuned`` with the group writer on a thread of the API process
  (``WRITER_PROCESS=0``, ``serve``'s only way until 2026-12-03) instead of a process of its own;
* ``one-route``: ``tuned`` without the direct route (FastAPI's stack serves ``POST /v1/matches``);
* ``json-dumps`` / ``orjson``: ``tuned`` with the answer text of a write built the plain way, as a
  dict (``views.match_view``) encoded by ``json.dumps`` or by orjson (measurement only: orjson is
  no dependency, ``pip install orjson`` to measure it), instead of the hand-built text;
* ``repeat-singly``: ``tuned`` with each repeat's answer derived on its own (two statements per
  repeat, as before 2026-12-01) instead of all of a batch's repeats together;
* ``wrap-future``: ``tuned`` with each request waiting on the writer's thread future through
  ``asyncio.wait_for(asyncio.wrap_future(...))`` (before 12-01 evening) instead of a loop future
  that the writer settles for the whole batch in one ``call_soon_threadsafe``;
* ``pooled-games``: ``tuned`` with the waiting-game check as a read of its own on a pooled
  connection before each batch (before 12-01 evening) instead of inside the batch's transaction;
* ``minimal``: ``tuned``, the writes sent with ``Prefer: return=minimal`` (the answer's summary
  instead of the full explained answer);
* ``pinned``: ``tuned`` with the writer process (``SEDMA_ELO_WRITER_CPUS``) and, on PostgreSQL, the
  database server's processes on CPU 0, the API process on the others (``bench_service.py --pin``;
  setting the server's CPUs needs root);
* ``before``: the server of another checkout (``--before OLD/src``, e.g. a ``git worktree`` of the
  11-29 commit), with its own database seeded by its own code, in the same alternating rounds.

The variants that patch the write path (``json-dumps``, ``orjson``, ``repeat-singly``, ``wrap-future``,
``pooled-games``) run the writer on a thread of the server, where their patches apply: compare them
with ``writer-thread``.

``--workload repeats`` POSTs repeats of the seeded matches (the same body again) instead of new ones.

Usage::

    .venv/bin/python benchmarks/bench_write_paths.py [--db sqlite|postgresql] [--rounds 3] \
        [--duration 8] [--variants plain,tuned] [--before OLD/src --variants tuned,before]

Needs ``wrk`` (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import cpu_ticks, descendants
from bench_service import (
    POST_LUA,
    REPEAT_LUA,
    WRITER_CPUS,
    api_cpus,
    database_server_on,
    fresh_database,
    port_free,
    seed,
    started,
    stop,
    writer_cpus_env,
    wrk,
)

#: Variants that patch the write path in the server's process, so run its writer on a thread of
#: it: compare them with ``writer-thread``.
PATCHED = frozenset({"json-dumps", "orjson", "repeat-singly", "wrap-future", "pooled-games"})

#: The GIL switch interval ``serve`` set until 2026-12-02 (seconds), for the variants that measure it.
SHORT_SWITCH = 0.0001

VARIANTS = (
    "plain",
    "tuned",
    "unfrozen",
    "short-switch",
    "commit-checkpoints",
    "writer-thread",
    "switch-only",
    "one-route",
    "json-dumps",
    "orjson",
    "repeat-singly",
    "wrap-future",
    "pooled-games",
    "minimal",
    "pinned",
    "before",
)


def child(variant: str, url: str, port: int) -> None:
    """Run one server variant until terminated (the benchmark's own subprocess)."""
    import uvicorn

    from sedma_elo.service import ServiceSettings, create_app

    extra: dict[str, Any] = {"wal_checkpoint_seconds": 0} if variant == "commit-checkpoints" else {}
    # A variant that patches the write path in this process needs the writer on a thread here.
    extra["writer_process"] = variant != "writer-thread" and variant not in PATCHED
    settings = ServiceSettings(database_url=url, rate_limit=0, port=port, **extra)
    app = create_app(settings)
    if variant == "one-route":
        app.direct = None  # type: ignore[attr-defined]
    if variant in ("json-dumps", "orjson"):
        plain_answers(variant)
    if variant == "repeat-singly":
        singly()
    if variant == "wrap-future":
        wrapped_futures()
    if variant == "pooled-games":
        pooled_games()
    if variant != "plain":
        from sedma_elo.service import runtime

        short = variant in ("short-switch", "switch-only")
        freeze = variant not in ("unfrozen", "switch-only")
        runtime.tune_process(switch_interval=SHORT_SWITCH if short else None, freeze=freeze)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# The ``before`` variant's seeding and server, run with PYTHONPATH=OLD/src: only names that the
# 11-29 code has too (its key helper lived in service.keys; its create_app tuned the process itself,
# later code is tuned as `serve` tunes it).
BEFORE_SEED = """
import sys
from sedma_elo import Match
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database
try:
    from sedma_elo.service.auth import create_key
except ImportError:
    from sedma_elo.service.keys import create_key
url, players = sys.argv[1], int(sys.argv[2])
db = open_database(url)
ledger = Ledger(db)
ledger.ensure_version()
ledger.import_matches([Match.single(f"p{i:06d}", f"p{i + 1:06d}", "a" if i % 4 else "b",
    match_id=f"seed-{i}") for i in range(1, players, 2)], batch=5000)
print(create_key(db, "write", "bench")[0])
db.dispose()
"""
BEFORE_SERVE = """
import sys
import uvicorn
from sedma_elo.service import ServiceSettings, create_app
try:
    from sedma_elo.service import runtime
except ImportError:
    runtime = None
url, port = sys.argv[1], int(sys.argv[2])
app = create_app(ServiceSettings(database_url=url, rate_limit=0, port=port))
if runtime is not None:
    runtime.tune_process()
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
"""


def plain_answers(encoder: str) -> None:
    """Build a write's answer as a dict encoded by ``encoder`` instead of the hand-built text."""
    import json

    from sedma_elo.service.ledger import answers, batch
    from sedma_elo.service.ledger.views import match_view, view_text

    if encoder == "orjson":
        import orjson

        def encode(view: dict[str, object]) -> str:
            return orjson.dumps(view).decode()
    else:
        encode = view_text

    def text(sub: Any, seq: int, version: Any, result: Any) -> str:
        return encode(match_view(json.loads(sub.body), seq, sub.played_at, version, result, False, None))

    batch.response_text = text  # type: ignore[attr-defined]
    answers.response_text = text  # type: ignore[attr-defined]


def singly() -> None:
    """Derive each repeat's answer on its own, two statements per repeat (the code before 2026-12-01)."""
    from sedma_elo.service.ledger import answers, write_pg, write_sqlite

    def one_by_one(raw: Any, ph: str, version_of: Any, subs: Any, stored: Any) -> Any:
        return lambda seq: answers.derive_answer(raw, ph, version_of, seq)

    write_pg.repeat_answers = one_by_one  # type: ignore[attr-defined]
    write_sqlite.repeat_answers = one_by_one  # type: ignore[attr-defined]


def wrapped_futures() -> None:
    """Wait for each write on the writer's thread future, as before 12-01 evening."""
    import asyncio

    from sedma_elo.service import writer

    async def submit(self: Any, sub: Any) -> Any:
        return await asyncio.wait_for(asyncio.wrap_future(self.submit_nowait(sub)), self.timeout)

    writer.GroupWriter.submit = submit  # type: ignore[method-assign]


def pooled_games() -> None:
    """Read the waiting games of each batch on a pooled connection first, as before 12-01 evening
    (the benchmark posts no game, so nothing is refused either way)."""
    from sedma_elo.service.ledger import writes

    apply = writes.WriterSession.apply

    def first_pooled(self: Any, subs: Any, *, answers: bool = True, held: Any = None) -> Any:
        if held is not None:
            marks = ", ".join("?" * len(subs))
            self.ledger.db.query(
                f"SELECT match_id FROM games WHERE match_id IN ({marks})"
                " AND status IN ('queued', 'analysing')",
                tuple(s.match_id for s in subs),
            )
        return apply(self, subs, answers=answers)

    writes.WriterSession.apply = first_pooled  # type: ignore[method-assign,assignment]


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds so far of process ``pid`` and its live descendants (a writer
    process, the resource tracker), from Linux ``/proc``."""
    ticks = 0
    for member in descendants(pid):
        with contextlib.suppress(OSError):  # ended meanwhile
            ticks += cpu_ticks(member)
    return ticks / os.sysconf("SC_CLK_TCK")


def before_env(before: str | None) -> dict[str, str] | None:
    """The environment of a process running the ``--before`` checkout's code (None: this one's)."""
    return None if before is None else {**os.environ, "PYTHONPATH": str(Path(before).resolve())}


def start(
    variant: str, url: str, port: int, env: dict[str, str] | None
) -> tuple[subprocess.Popen[bytes], str]:
    port_free(port)
    base = f"http://127.0.0.1:{port}"
    cpus = None
    if env is None:
        cmd = [sys.executable, __file__, "--child", variant, url, str(port)]
        if variant == "pinned":
            cpus = api_cpus()
            env = {**os.environ, **writer_cpus_env()}
    else:
        cmd = [sys.executable, "-c", BEFORE_SERVE, url, str(port)]
    proc = started(cmd, f"{base}/healthz", env, cpus)
    return proc, base


def seed_before(url: str, players: int, env: dict[str, str]) -> str:
    """Seed ``url`` with the ``--before`` checkout's code (its own schema); the write key."""
    out = subprocess.run(
        [sys.executable, "-c", BEFORE_SEED, url, str(players)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.strip().splitlines()[-1]


def one_round(
    variant: str, n: int, url: str, key: str, args: argparse.Namespace, env: dict[str, str] | None
) -> tuple[dict[str, str], float]:
    """Round ``n`` of ``variant``: a fresh server, ``wrk`` against it; wrk's figures and the
    server's CPU µs per request (its process tree, from ``/proc``)."""
    proc, base = start(variant, url, args.port, env)
    try:
        wrk_env = {"BENCH_KEY": key, "BENCH_PREFIX": f"r{n}{variant[:2]}{secrets.token_hex(2)}"}
        if variant == "minimal":
            wrk_env["BENCH_PREFER"] = "return=minimal"
        lua = REPEAT_LUA if args.workload == "repeats" else POST_LUA
        cpu = cpu_seconds(proc.pid)
        r = wrk(base, "/v1/matches", lua, args.duration, args.connections, wrk_env)
        cpu = cpu_seconds(proc.pid) - cpu
    finally:
        stop(proc)
    per = cpu / max(int(r["requests"]), 1) * 1e6 if r["requests"] != "?" else float("nan")
    return r, per


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
    parser.add_argument("--port", type=int, default=18_310)
    parser.add_argument("--workload", choices=["new", "repeats"], default="new")
    parser.add_argument("--before", metavar="OLD/src", help="the src folder of the `before` variant's code")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    variants = args.variants.split(",")
    if unknown := set(variants) - set(VARIANTS):
        sys.exit(f"unknown variants: {', '.join(sorted(unknown))} (choose from {', '.join(VARIANTS)})")
    if ("before" in variants) != (args.before is not None):
        sys.exit("--before OLD/src and the variant `before` go together")
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install -y wrk)")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (shared with other jobs)")
    print(f"== {args.db}, {args.workload} matches: {args.rounds} rounds of {args.duration} s,", end="")
    print(f" {args.connections} connections")
    rates: dict[str, list[float]] = {v: [] for v in variants}
    cpus: dict[str, list[float]] = {v: [] for v in variants}
    old_db = fresh_database(args.db) if args.before else contextlib.nullcontext("")
    with fresh_database(args.db) as url, old_db as old_url:
        key = seed(url, args.players)
        old_env = before_env(args.before)
        old_key = seed_before(old_url, args.players, old_env) if old_env is not None else ""
        for n in range(args.rounds):
            for variant in variants:
                old = variant == "before"
                # `pinned` on PostgreSQL: the server's processes on the writer's CPU for this round.
                pin = variant == "pinned" and args.db == "postgresql"
                with database_server_on(WRITER_CPUS) if pin else contextlib.nullcontext():
                    r, per = one_round(
                        variant,
                        n,
                        old_url if old else url,
                        old_key if old else key,
                        args,
                        old_env if old else None,
                    )
                print(f"  round {n + 1} {variant:<12} {r['rps']:>9} req/s", end="")
                print(
                    f"  p99 {r['p99']:>8}  non-2xx {r['non2xx']}  server CPU {per:6.0f} µs per request"
                    f"  steal {r['steal']}"
                )
                cpus[variant].append(per)
                rates[variant].append(float(r["rps"]))
    first = statistics.median(rates[variants[0]])
    first_cpu = statistics.median(cpus[variants[0]])
    for variant in variants:
        med, cpu = statistics.median(rates[variant]), statistics.median(cpus[variant])
        print(
            f"  {variant:<13} median {med:9.1f} req/s, ratio to {variants[0]}: {med / first:.3f};"
            f" server CPU {cpu:6.0f} µs per request, ratio {cpu / first_cpu:.3f}"
        )


if __name__ == "__main__":
    main()
