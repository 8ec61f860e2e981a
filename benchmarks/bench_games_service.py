"""Game records through the service's job queue: what a worker adds to the analysis itself.

Usage::

    .venv/bin/python benchmarks/bench_games_service.py [--games 20] [--database-url sqlite:///...]

Posts ``--games`` two-player bot matches as game records (``GameStore.submit``, what
``POST /v1/games`` does after its checks), then one worker in this process drains them. Reports the
time to check and store a record, the median analysis time of the same records analysed directly
(``analyze``), and the worker's time per game: the difference is the job table's and the ledger's
share (claim, apply, mark). The queue is the ``games`` table on SQLite and procrastinate on
PostgreSQL (``service/games/queue.py``; the drain runs a procrastinate worker until no job is
left). Ratio in the same run; no goal was set for it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from sedma_elo.game.analysis import analyze
from sedma_elo.game.bots import make_bot, play_match
from sedma_elo.game.record import record_to_dict
from sedma_elo.service.games import GameIn, GameStore, check_game
from sedma_elo.service.games.worker import GameWorker
from sedma_elo.service.ledger import Ledger
from sedma_elo.storage import open_database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{tmp}/bench.db"
        db = open_database(url)
        ledger = Ledger(db, async_connections=1)
        ledger.ensure_version()
        records = []
        for i in range(args.games):
            bots = [make_bot("greedy", 2 * i + 1), make_bot("greedy", 2 * i + 2)]
            played = play_match(bots, [f"p{i % 7}", f"q{(i * 3) % 5}"], 1000 + i)
            records.append(record_to_dict(played.record))
        # Warm the compiled search once so neither side pays its compilation.
        analyze(check_game(GameIn.model_validate({"match_id": "warm", "record": records[0]})).record)
        started = time.perf_counter()
        for i, rec in enumerate(records):
            rec.pop("match_id", None)
            GameStore(db).submit(check_game(GameIn.model_validate({"match_id": f"b-{i}", "record": rec})))
        stored = (time.perf_counter() - started) / len(records)
        direct = []
        for rec in records:
            parsed = check_game(GameIn.model_validate({"match_id": "x", "record": rec})).record
            t = time.perf_counter()
            analyze(parsed)
            direct.append(time.perf_counter() - t)
        started = time.perf_counter()
        taken = GameWorker(ledger).drain()
        worker = (time.perf_counter() - started) / taken
        assert taken == len(records) and ledger.ledger_size() == len(records)
        db.dispose()
    mean_direct = statistics.fmean(direct)
    print(f"{len(records)} games on {url.split(':')[0]}")
    print(f"check + store a record     {1000 * stored:8.1f} ms")
    median = statistics.median(direct)
    print(f"analyze (direct), median   {1000 * median:8.1f} ms, mean {1000 * mean_direct:.1f} ms")
    print(
        f"worker per game (mean)     {1000 * worker:8.1f} ms  ({worker / mean_direct:.2f} x the direct mean)"
    )


if __name__ == "__main__":
    main()
