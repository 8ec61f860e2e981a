"""The ledger at scale on PostgreSQL: a synthetic league of ``--matches`` matches (default 10 million).

Steps, each timed (wall seconds and the child's peak resident memory):

1. ``make_league.generate`` streams the league to a gzip JSON Lines file (about a million players
   at 10 M: ``--players`` defaults to ``matches // 10``; heavy-tailed activity, draws, 2-vs-2 team
   matches; deterministic by ``--seed``);
2. ``sedma-elo import FILE`` into a fresh PostgreSQL database;
3. the database size: every table and index after ``VACUUM``, bytes per match, one active version;
4. ``sedma-elo ratings rerate`` under other rules (``k_top`` 24), then the busiest players' page
   summaries (``ratings store-careers``: what ``import`` and ``rerate`` run at their end, here
   timed as a step of its own with ``--store-careers 0`` on those two), then ``verify``;
5. ``sedma-elo serve`` and ``wrk``: the leaderboard, single players and their histories, a
   player's rank with five neighbours each side (``around``) and leaderboard pages at every
   depth (``board, deep``: the page after every 500th rank) (16 connections, p99 goal < 50 ms),
   the player page of the player whose match count is closest to
   ``--page-matches`` (10,000; 1 connection: one reader's latency, goal < 100 ms) and unique match
   writes (16 connections).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_league10m.py --matches 1000000 --db-prefix NAME

``--keep FILE`` keeps (and reuses) the league file; ``--skip-wrk`` stops after verify;
``--keep-db`` keeps the database, and ``--database-url URL`` (same ``--matches``) then runs only
the wrk part on it (after ``VACUUM (ANALYZE)``, which reads the heaps: ``--no-vacuum`` for a run
on a cold cache). Needs
``wrk`` (Debian: ``apt-get install -y wrk``) and PostgreSQL on 127.0.0.1:5432 (user postgres).
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pg import dsn
from _wrk import run as wrk
from _wrk import write_lua
from bench_service import PG_ADMIN, SEDMA_ELO, report, serve
from bench_storage import _pg_sizes
from make_league import generate

from sedma_elo.core.rules import Rules
from sedma_elo.service.auth import create_key
from sedma_elo.service.ledger.cursors import encode_cursor
from sedma_elo.storage import open_database

#: Unique 1-vs-1 matches among the first 10,000 players of the league (``p0``...``p9999``).
WRITE_LUA = write_lua("p%d", first=0, prefix="w")

#: A random rated player of the league (ids from BENCH_IDS, a file of one id a line), or any
#: BENCH_PATH followed by a random line of that file (a leaderboard cursor, say).
PLAYER_LUA = r"""
local ids = {}
for line in io.lines(os.getenv("BENCH_IDS")) do table.insert(ids, line) end
local path = os.getenv("BENCH_PATH") or "/v1/players/"
local suffix = os.getenv("BENCH_SUFFIX") or ""
function request()
  return wrk.format("GET", path .. ids[math.random(1, #ids)] .. suffix)
end
"""


@dataclass(frozen=True, slots=True)
class Step:
    """One timed child process: wall seconds, peak resident memory in MB, exit status, last line."""

    seconds: float
    peak_mb: float
    status: int
    tail: str


def run(args: list[str]) -> Step:
    """Run a command, timing it and taking its peak resident set size (``wait4``'s rusage)."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    lines = [line for line in out.splitlines() if line.strip()]
    return Step(seconds, usage.ru_maxrss / 1024, proc.returncode, lines[-1] if lines else "")


@contextmanager
def fresh_pg(prefix: str, *, keep: bool) -> Iterator[str]:
    """A new PostgreSQL database named after ``prefix``, dropped after use unless ``keep``."""
    name = f"{prefix}_league_{secrets.token_hex(3)}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    try:
        yield url
    finally:
        if keep:
            print(f"  kept the database: --database-url {url}")
        else:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def write_league(path: Path, matches: int, players: int, seed: int) -> float:
    """Stream the league to ``path`` (gzip JSON Lines); the seconds it took."""
    import gzip
    import io

    started = time.perf_counter()
    with io.TextIOWrapper(gzip.open(path, "wb", compresslevel=1), encoding="utf-8") as out:
        for line in generate(matches, players, seed=seed):
            out.write(line)
            out.write("\n")
    return time.perf_counter() - started


def _rows(url: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """Every row of one statement on ``url``."""
    with psycopg.connect(dsn(url)) as conn:
        return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]


def rated_ids(url: str, path: Path, count: int = 10_000) -> None:
    """Write ``count`` rated players of the active version, spread over the id range, to ``path``."""
    rows = _rows(
        url,
        "SELECT r.player_id FROM player_ratings r JOIN rating_versions v ON v.id = r.version_id"
        " AND v.active ORDER BY md5(r.player_id) LIMIT %s",
        (count,),
    )
    path.write_text("".join(f"{r[0]}\n" for r in rows), encoding="utf-8")


def rank_cursors(url: str, path: Path, every: int = 500) -> int:
    """Write the leaderboard cursor after every ``every``-th rank of the active version to ``path``
    (pages from the top to the bottom of the board); return how many."""
    rows = _rows(
        url,
        "SELECT rating, player_id, rank FROM (SELECT r.rating, r.player_id,"
        " row_number() OVER (ORDER BY r.rating DESC, r.player_id) AS rank FROM player_ratings r"
        " JOIN rating_versions v ON v.id = r.version_id AND v.active) ranked WHERE rank %% %s = 0",
        (every,),
    )
    path.write_text("".join(f"{encode_cursor(*r)}\n" for r in rows), encoding="utf-8")
    return len(rows)


def server_settings(url: str) -> str:
    """The database server's settings that move the read figures, as one line."""
    names = ("shared_buffers", "autovacuum", "effective_cache_size")
    return ", ".join(f"{n} {_rows(url, f'SHOW {n}')[0][0]}" for n in names)


def vacuum(url: str) -> None:
    """``VACUUM (ANALYZE)`` the whole database, timed."""
    started = time.perf_counter()
    with psycopg.connect(dsn(url), autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
    print(f"  VACUUM (ANALYZE) {time.perf_counter() - started:.1f} s")


def busiest_near(url: str, target: int) -> tuple[str, int]:
    """The player whose matches played (active version) is closest to ``target``, and that count."""
    rows = _rows(
        url,
        "SELECT r.player_id, r.matches_played FROM player_ratings r"
        " JOIN rating_versions v ON v.id = r.version_id AND v.active"
        " ORDER BY abs(r.matches_played - %s), r.player_id LIMIT 1",
        (target,),
    )
    return str(rows[0][0]), int(rows[0][1])


def sizes(url: str, matches: int, label: str) -> None:
    """Print every table and index and the bytes per match."""
    found, whole = _pg_sizes(url)
    print(f"  database size ({label}):")
    for name, size in sorted(found.items(), key=lambda kv: -kv[1]):
        if size > 1_000_000:
            print(f"    {name:<40} {size:>15,} {size / matches:>8.1f} B/match")
    total = sum(found.values())
    print(f"    {'all tables and indexes':<40} {total:>15,} {total / matches:>8.1f} B/match")
    print(f"    {'database (over an empty one)':<40} {whole:>15,} {whole / matches:>8.1f} B/match")


def step(name: str, s: Step, matches: int) -> None:
    """Print one timed step."""
    rate = f"{matches / s.seconds:>9,.0f} matches/s" if matches else ""
    print(f"  {name:<8} {s.seconds:>8.1f} s {rate}  peak {s.peak_mb:>7.0f} MB  exit {s.status}: {s.tail}")


def serve_and_load(url: str, args: argparse.Namespace, players: int) -> None:
    """Start the service and run every wrk measure against it."""
    db = open_database(url)
    key, _ = create_key(db, "write", "bench")
    db.dispose()
    page_player, page_matches = busiest_near(url, args.page_matches)
    ids = Path(tempfile.mkdtemp(prefix="league10m-")) / "ids.txt"
    rated_ids(url, ids)
    cursors = ids.parent / "cursors.txt"
    print(f"  leaderboard pages at {rank_cursors(url, cursors):,} depths, top to bottom (board, deep)")
    # A player's rank with five neighbours each side; a page of 50 after a rank of the whole board.
    env_a = {"BENCH_IDS": str(ids), "BENCH_PATH": "/v1/leaderboard/around/", "BENCH_SUFFIX": "?span=5"}
    env_c = {"BENCH_IDS": str(cursors), "BENCH_PATH": "/v1/leaderboard?limit=50&cursor="}
    print(f"  PostgreSQL: {server_settings(url)}")
    proc = serve(url, args.port, 1)
    base = f"http://127.0.0.1:{args.port}"
    d, c = args.duration, args.connections
    try:
        report("leaderboard", wrk(base, "/v1/leaderboard?limit=50", None, d, c, {}))
        env = {"BENCH_IDS": str(ids)}
        report("player", wrk(base, "/v1/players/p0", PLAYER_LUA, d, c, env))
        env_h = {**env, "BENCH_SUFFIX": "/history?limit=50"}
        report("history", wrk(base, "/v1/players/p0/history", PLAYER_LUA, d, c, env_h))
        report("around", wrk(base, "/v1/leaderboard/around/p0", PLAYER_LUA, d, c, env_a))
        report("board, deep", wrk(base, "/v1/leaderboard", PLAYER_LUA, d, c, env_c))
        print(f"  player page: {page_player}, {page_matches:,} matches (1 connection)")
        report("page", wrk(base, f"/players/{page_player}", None, d, 1, {}, 60))
        report("page 2", wrk(base, f"/players/{page_player}?page=2", None, d, 1, {}, 60))
        env_w = {"BENCH_KEY": key, "BENCH_PREFIX": f"w{secrets.token_hex(3)}"}
        report("writes", wrk(base, "/v1/matches", WRITE_LUA, d, c, env_w))
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(ids.parent, ignore_errors=True)
    if args.baseline_src:
        # The same page and history served by another checkout's code (PYTHONPATH wins over the
        # editable install): the before figures, in the same run and on the same database. An
        # older checkout refuses a newer schema: alembic_version says --baseline-revision meanwhile
        # (it reads nothing a later migration added; it writes nothing here).
        ids.parent.mkdir(exist_ok=True)
        rated_ids(url, ids)
        rank_cursors(url, cursors)
        with stamped(url, args.baseline_revision):
            proc = serve(url, args.port, 1, PYTHONPATH=str(args.baseline_src))
            try:
                report("history, base", wrk(base, "/v1/players/p0/history", PLAYER_LUA, d, c, env_h))
                report("around, base", wrk(base, "/v1/leaderboard/around/p0", PLAYER_LUA, d, c, env_a))
                report("board, deep, base", wrk(base, "/v1/leaderboard", PLAYER_LUA, d, c, env_c))
                report("page, base", wrk(base, f"/players/{page_player}", None, 3 * d, 1, {}, 60))
            finally:
                proc.terminate()
                proc.wait(30)
                shutil.rmtree(ids.parent, ignore_errors=True)


@contextmanager
def stamped(url: str, revision: str | None) -> Iterator[None]:
    """``alembic_version`` set to ``revision`` (if given) inside the block, put back after it.

    The stored career states are deleted first: derived data, which the older code stores again
    in its own form and may not read in the newer one (migration 0014's base64 meetings)."""
    if revision is None:
        yield
        return
    with psycopg.connect(dsn(url), autocommit=True) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        assert row is not None
        conn.execute("DELETE FROM career_states")
        conn.execute("UPDATE alembic_version SET version_num = %s", (revision,))
        try:
            yield
        finally:
            conn.execute("UPDATE alembic_version SET version_num = %s", (row[0],))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=10_000_000)
    parser.add_argument("--players", type=int, default=0, help="default: matches // 10")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the league file here (reused if present)"
    )
    parser.add_argument("--db-prefix", default="sedma_elo_bench", help="prefix of the database's name")
    parser.add_argument("--duration", type=int, default=10, help="seconds of each wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--page-matches", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=18_400)
    parser.add_argument("--skip-wrk", action="store_true", help="stop after verify")
    parser.add_argument(
        "--baseline-src",
        type=Path,
        default=None,
        help="also time the player page served by this src/ (before)",
    )
    parser.add_argument(
        "--baseline-revision",
        default=None,
        help="alembic_version while the baseline serves (e.g. 0010_verify2)",
    )
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database at the end")
    parser.add_argument(
        "--database-url", default=None, help="only the wrk part, on this league's ledger (from --keep-db)"
    )
    parser.add_argument(
        "--no-vacuum",
        action="store_true",
        help="with --database-url: no VACUUM (ANALYZE) first (a cold-cache run)",
    )
    args = parser.parse_args(argv)
    if not args.skip_wrk and shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install -y wrk)")
    players = args.players or max(100, args.matches // 10)
    n = args.matches
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (shared with other jobs)")
    print(f"league: {n:,} matches, {players:,} players, seed {args.seed}")
    if args.database_url:
        # What autovacuum would have left after the writes of an earlier run (this project's
        # machines run PostgreSQL with autovacuum off): dead player rows slowed the rank reads.
        # Not for a run on a cold cache: the vacuum reads the heaps (--no-vacuum).
        if not args.no_vacuum:
            vacuum(args.database_url)
        serve_and_load(args.database_url, args, players)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="league10m-"))
    try:
        league = args.keep or tmp / "league.jsonl.gz"
        if league.exists():
            print(f"  league file {league} reused ({league.stat().st_size:,} bytes)")
        else:
            took = write_league(league, n, players, args.seed)
            print(f"  generate {took:>8.1f} s {n / took:>9,.0f} matches/s  ({league.stat().st_size:,} bytes)")
        rules = tmp / "k24.toml"
        rules.write_text(Rules(name="bench", version="k_top-24", k_top=24).to_toml(), encoding="utf-8")
        with fresh_pg(args.db_prefix, keep=args.keep_db) as url:
            db = ["--database-url", url]
            # The page summaries that import and rerate store at their end, timed on their own.
            none = ["--store-careers", "0"]
            step("import", run([SEDMA_ELO, "import", str(league), *db, *none]), n)
            sizes(url, n, "one version")
            step("re-rate", run([SEDMA_ELO, "ratings", "rerate", str(rules), *db, *none]), n)
            step("pages", run([SEDMA_ELO, "ratings", "store-careers", *db]), 0)
            step("verify", run([SEDMA_ELO, "verify", *db]), n)
            sizes(url, n, "two versions, after re-rate")
            if not args.skip_wrk:
                serve_and_load(url, args, players)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        print(f"own CPU {resource.getrusage(resource.RUSAGE_SELF).ru_utime:.0f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
