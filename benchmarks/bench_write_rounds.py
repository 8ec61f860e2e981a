"""PostgreSQL match writes in consecutive rounds on one ledger, with ``player_ratings``' row stats.

Seeds a fresh database as ``bench_service.py`` does (``--players`` players), starts ``sedma-elo
serve`` (one process) and runs ``--rounds`` rounds of ``wrk`` POSTing new matches (16 connections,
``--duration`` s each). After each round it prints writes/s, p99 and, per table, PostgreSQL's live
and dead rows, updates, HOT updates, autovacuum and autoanalyze runs and total size: whether the
write rate falls as the ledger grows, and with what.

Usage::

    .venv/bin/python benchmarks/bench_write_rounds.py [--rounds 6] [--duration 5] [--players 10000]

Needs ``wrk`` (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from bench_service import POST_LUA, fresh_database, seed, serve, stop, wrk

STATS = (
    "SELECT relname, n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd, autovacuum_count,"
    " autoanalyze_count, pg_total_relation_size(relid) FROM pg_stat_user_tables"
    " WHERE relname IN ('player_ratings', 'rating_counts', 'matches') ORDER BY relname"
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=18_830)
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    with fresh_database("postgresql") as url:
        key = seed(url, args.players)
        proc = serve(url, args.port, 1)
        try:
            for r in range(args.rounds):
                env = {"BENCH_KEY": key, "BENCH_PREFIX": f"r{r}{secrets.token_hex(2)}"}
                res = wrk(base, "/v1/matches", POST_LUA, args.duration, 16, env)
                print(f"round {r}: {res['rps']} writes/s, p99 {res['p99']}")
                with psycopg.connect(dsn(url)) as conn:
                    for name, live, dead, upd, hot, vac, ana, size in conn.execute(STATS):
                        print(
                            f"    {name:15s} live {live:7d} dead {dead:7d} updates {upd:7d} HOT {hot:7d}"
                            f" autovacuum {vac} autoanalyze {ana} {size / 1e6:6.1f} MB"
                        )
        finally:
            stop(proc)


if __name__ == "__main__":
    main()
