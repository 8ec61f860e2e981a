"""Server-side render time of the HTML leaderboard with 100,000 players (a benchmark, not a test).

Seeds a fresh SQLite database (or the ``--database-url`` given) through the service layer, then
times ``GET /`` (and a few other pages) through the real app in-process with FastAPI's TestClient:
the time covers routing, the service reads and the template, not a network hop. Prints median, p90,
p99 and max in milliseconds. The issue's goal: the leaderboard renders in under 50 ms.

    .venv/bin/python benchmarks/bench_pages.py                  # 100,000 players, 300 requests
    .venv/bin/python benchmarks/bench_pages.py --players 10000 --requests 100
"""

from __future__ import annotations

import argparse
import html
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from sedma_elo.service import Ledger, MatchIn, ServiceSettings, create_app, submission_from_payload
from sedma_elo.storage import open_database


def seed(url: str, players: int, extra: int, rng: random.Random) -> None:
    """Every player plays one first match (pairs), then ``extra`` matches among the first 2,000."""
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    ids = [f"player-{i:06d}" for i in range(players)]
    bodies: list[dict[str, Any]] = []
    for i in range(0, players - 1, 2):
        bodies.append(_body(f"first-{i}", ids[i], ids[i + 1], rng))
    regulars = ids[: min(2000, players)]
    for i in range(extra):
        a, b = rng.sample(regulars, 2)
        bodies.append(_body(f"extra-{i}", a, b, rng))
    started = time.perf_counter()
    for start in range(0, len(bodies), 1000):
        subs = [submission_from_payload(MatchIn.model_validate(b)) for b in bodies[start : start + 1000]]
        ledger.apply(subs)
        print(f"\rseeded {min(start + 1000, len(bodies)):,}/{len(bodies):,} matches", end="", file=sys.stderr)
    print(f" in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    db.dispose()


def _body(match_id: str, a: str, b: str, rng: random.Random) -> dict[str, Any]:
    def stats() -> dict[str, int]:
        return {
            "bad_moves": rng.randint(0, 4),
            "won_by_16": rng.randint(0, 3),
            "won_by_24": rng.randint(0, 1),
        }

    return {
        "match_id": match_id,
        "played_at": "2026-11-29T12:00:00Z",
        "player_a": a,
        "player_b": b,
        "winner": rng.choice("ab"),
        "stats": {"a": stats(), "b": stats()},
    }


def measure(client: TestClient, url: str, requests: int) -> list[float]:
    """Milliseconds per request of ``requests`` GETs of ``url`` (after 10 warm-up requests)."""
    for _ in range(10):
        client.get(url).raise_for_status()
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        answer = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
    return times


NEXT = re.compile(r'<a href="([^"]*)" rel="next">')


def walk(client: TestClient, pages: int, start: str = "/") -> tuple[list[float], str]:
    """Milliseconds of each of ``pages`` leaderboard pages, each viewed once (the first view of each).

    Follows each page's own "Next" link from ``start``; returns the times and the URL of the last
    page viewed.
    """
    times = []
    url = start
    for _ in range(pages):
        started = time.perf_counter()
        answer = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
        found = NEXT.search(answer.text)
        if found is None:
            break
        url = html.unescape(found.group(1))
    return times, url


def report(name: str, times: list[float]) -> None:
    """One line: median, p90, p99 and max in milliseconds."""
    ordered = sorted(times)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    print(
        f"{name:<34} n={len(times):>4}  median {statistics.median(times):6.1f} ms  "
        f"p90 {pct(0.90):6.1f} ms  p99 {pct(0.99):6.1f} ms  max {ordered[-1]:6.1f} ms"
    )


def main() -> None:
    """Seed, serve in-process, time the pages, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=100_000, help="players to seed (default 100,000)")
    parser.add_argument("--extra", type=int, default=20_000, help="extra matches among the top 2,000 players")
    parser.add_argument("--requests", type=int, default=300, help="timed requests per page")
    parser.add_argument("--database-url", default=None, help="use this database (seeded if empty)")
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        probe = open_database(url)
        ledger = Ledger(probe)
        ledger.ensure_version()
        empty = not ledger.leaderboard(1).items
        probe.dispose()
        if empty:
            seed(url, args.players, args.extra, rng)
        app = create_app(ServiceSettings(database_url=url))
        with TestClient(app) as client:
            started = time.perf_counter()
            client.get("/").raise_for_status()
            first = (time.perf_counter() - started) * 1000
            board = client.get("/v1/leaderboard?limit=1").json()
            top = board["items"][0]["player_id"]
            print(f"players: {args.players:,}; top player {top}")
            print(f"GET / first request after the app started: {first:.1f} ms")
            times, deep = walk(client, 200)
            report("GET / 200 pages, each viewed once", times)
            report("GET / (leaderboard, 50 rows)", measure(client, "/", args.requests))
            report("GET /?cursor=... (page ~200)", measure(client, deep, args.requests))
            times, _ = walk(client, 200, "/?all=1")
            report("GET /?all=1 200 pages, viewed once", times)
            report("GET /?limit=100", measure(client, "/?limit=100", args.requests // 2))
            report("GET /v1/leaderboard (JSON, 50)", measure(client, "/v1/leaderboard", args.requests))
            report(f"GET /players/{top}", measure(client, f"/players/{top}", max(10, args.requests // 10)))
            report("GET /matches/extra-0", measure(client, "/matches/extra-0", max(10, args.requests // 10)))


if __name__ == "__main__":
    main()
