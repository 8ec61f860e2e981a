"""What the change feed's hook costs the write path: matches/s with and without it, in alternating rounds.

Each round applies ``--batches`` batches of ``--batch`` new one-against-one matches (among
``--players`` players) through the writer's own path (:class:`WriterSession`, one transaction per
batch), from ``--threads`` threads at once, once with the feed hook (what the service runs) and
once with the hook replaced by a no-op. Rounds alternate (with, without, with, ...) on one growing
database, so a load change on a shared machine hits both alike; the summary gives each variant's
median matches/s and the ratio, and the time spent inside the hook per match.

With ``--threads 2`` on PostgreSQL the two writers also meet at the feed's table lock (held from the
hook's insert to the commit), which is the cost of sequences in commit order.

Usage::

    .venv/bin/python benchmarks/bench_feed.py [--db sqlite|postgresql] [--rounds 5] [--batches 40] \
        [--batch 64] [--threads 1] [--players 2000]
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import fresh_database

from sedma_elo.service.ledger import Ledger, write_pg, write_sqlite
from sedma_elo.service.payload import MatchIn, Submission, submission_from_payload
from sedma_elo.storage import open_database

_ids = itertools.count()


def batches(n: int, size: int, players: int, rng: random.Random) -> list[list[Submission]]:
    """``n`` batches of ``size`` new matches between random players."""
    out = []
    for _ in range(n):
        batch = []
        for _ in range(size):
            a, b = rng.sample(range(players), 2)
            body = {"match_id": f"b-{next(_ids)}", "player_a": f"p{a}", "player_b": f"p{b}", "winner": "a"}
            batch.append(submission_from_payload(MatchIn.model_validate(body)))
        out.append(batch)
    return out


def run(ledger: Ledger, work: list[list[list[Submission]]]) -> float:
    """Apply each thread's batches concurrently; matches/s over the whole run."""

    def apply(mine: list[list[Submission]]) -> None:
        with ledger.writer_session() as session:
            for batch in mine:
                assert all(o.status == "created" for o in session.apply(batch))

    threads = [threading.Thread(target=apply, args=(w,)) for w in work]
    start = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return sum(len(b) for w in work for b in w) / (time.perf_counter() - start)


def set_hook(hook: Callable[[Any, Any], None]) -> None:
    """Install ``hook`` as both write paths' feed hook."""
    write_sqlite.append_match_events = hook  # type: ignore[attr-defined]
    write_pg.append_match_events = hook  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--players", type=int, default=2000)
    args = parser.parse_args()
    real = write_sqlite.append_match_events  # type: ignore[attr-defined]
    spent = [0.0, 0]  # seconds inside the hook, matches it handled

    def timed(raw: Any, rows: Any) -> None:
        start = time.perf_counter()
        real(raw, rows)
        spent[0] += time.perf_counter() - start
        spent[1] += len(rows.matches)

    rng = random.Random(1)
    rates: dict[str, list[float]] = {"feed": [], "no feed": []}
    with fresh_database(args.db) as url:
        ledger = Ledger(open_database(url))
        ledger.ensure_version()

        def work() -> list[list[list[Submission]]]:
            return [batches(args.batches, args.batch, args.players, rng) for _ in range(args.threads)]

        run(ledger, work())  # warm up: players exist, statements prepared
        for _ in range(args.rounds):
            for variant in rates:
                set_hook(timed if variant == "feed" else (lambda raw, rows: None))
                rates[variant].append(run(ledger, work()))
        set_hook(real)
        ledger.db.dispose()
    base = statistics.median(rates["no feed"])
    print(f"== {args.db}, {args.threads} thread(s), batches of {args.batch}, {args.rounds} rounds")
    for variant, values in rates.items():
        med = statistics.median(values)
        each = ", ".join(f"{v:,.0f}" for v in values)
        print(f"{variant:8} {med:9,.0f} matches/s  ratio {med / base:.3f}  ({each})")
    # On PostgreSQL the hook only queues its statements (pipeline mode): the server's share is not in it.
    print(f"inside the hook: {spent[0] / max(1, spent[1]) * 1e6:.1f} us per match")


if __name__ == "__main__":
    main()
