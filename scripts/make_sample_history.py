"""Generate the bundled sample match history ``src/sedma_elo/data/sample_history.csv``.

Invented data (no real players): 30 players with a hidden strength play 400 one-against-one
matches over four months. A match is won by the first to win 3 rounds; a few matches stopped at
2:2 are draws. A won round is a 24er, a 16er or a "4 and last" win with fixed shares, and bad moves
are drawn around a mean that falls with strength. The seed is fixed, so running this script again
writes the same file byte for byte::

    python scripts/make_sample_history.py
"""

from __future__ import annotations

import csv
import math
import random
from datetime import datetime, timedelta
from pathlib import Path

SEED = 20_260_301
N_MATCHES = 400
ROUNDS_TO_WIN = 3
DRAW_AT_2_2 = 0.12  # share of matches reaching 2:2 that are stopped there as a draw (time limit)
SHARE_24 = 0.05  # a won round is a 24er (all tricks) ...
SHARE_16 = 0.12  # ... else a 16er (all points) ...
SHARE_4_AND_LAST = 0.12  # ... else won 4:4 with the last trick
OUT = Path(__file__).resolve().parent.parent / "src" / "sedma_elo" / "data" / "sample_history.csv"
NAMES = (
    "ana", "bojan", "cecilie", "dusan", "eva", "filip", "gordana", "hynek", "ivana", "jakub",
    "katarina", "lukas", "marija", "nikola", "olga", "petr", "radka", "stefan", "tereza", "uros",
    "vesna", "vojta", "zdenka", "zoran", "adela", "branko", "dana", "emil", "jelena", "milos",
)  # fmt: skip
COLUMNS = (
    "match_id", "played_at", "player_a", "player_b", "winner",
    "bad_moves_a", "bad_moves_b", "won_by_16_a", "won_by_16_b",
    "won_by_24_a", "won_by_24_b", "won_by_4_and_last_a", "won_by_4_and_last_b",
)  # fmt: skip


def poisson(rng: random.Random, mean: float) -> int:
    """Knuth's method; fine for the small means used here."""
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def play(rng: random.Random, strength_a: float, strength_b: float) -> dict[str, object]:
    """One match: round by round until a side has ROUNDS_TO_WIN (or a 2:2 draw)."""
    p_round = 1.0 / (1.0 + math.exp(-(strength_a - strength_b) * 0.8))
    counts = {
        f"{kind}_{side}": 0 for kind in ("won_by_16", "won_by_24", "won_by_4_and_last") for side in "ab"
    }
    rounds = {"a": 0, "b": 0}
    winner = ""
    while not winner:
        side = "a" if rng.random() < p_round else "b"
        rounds[side] += 1
        kind = rng.random()
        if kind < SHARE_24:
            counts[f"won_by_24_{side}"] += 1
        elif kind < SHARE_24 + SHARE_16:
            counts[f"won_by_16_{side}"] += 1
        elif kind < SHARE_24 + SHARE_16 + SHARE_4_AND_LAST:
            counts[f"won_by_4_and_last_{side}"] += 1
        if rounds["a"] == rounds["b"] == ROUNDS_TO_WIN - 1 and rng.random() < DRAW_AT_2_2:
            winner = "draw"
        elif rounds[side] == ROUNDS_TO_WIN:
            winner = side
    return {
        "winner": winner,
        "bad_moves_a": poisson(rng, max(0.2, 1.5 - 0.6 * strength_a)),
        "bad_moves_b": poisson(rng, max(0.2, 1.5 - 0.6 * strength_b)),
        **counts,
    }


def main() -> None:
    rng = random.Random(SEED)
    strength = {name: rng.gauss(0.0, 1.0) for name in NAMES}
    activity = [rng.uniform(0.3, 1.0) for _ in NAMES]
    when = datetime(2026, 3, 1, 17, 0)
    rows = []
    for i in range(1, N_MATCHES + 1):
        a, b = rng.choices(NAMES, weights=activity, k=2)
        while b == a:
            b = rng.choices(NAMES, weights=activity, k=1)[0]
        when += timedelta(minutes=rng.randint(20, 600))
        row = {"match_id": f"sample-{i:04d}", "played_at": when.isoformat(), "player_a": a, "player_b": b}
        row.update(play(rng, strength[a], strength[b]))
        rows.append(row)
    with OUT.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} matches between {len(NAMES)} players to {OUT}")


if __name__ == "__main__":
    main()
