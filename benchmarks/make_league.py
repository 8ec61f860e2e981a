"""Write a large, realistic synthetic match history for the ledger-at-scale benchmarks.

A league of ``--players`` players with heavy-tailed activity (a Pareto-distributed share of the
matches per player: most play a few matches, a few play thousands), a latent skill per player,
outcomes drawn from the Elo expectation of the skill difference, a share of draws, a share of
2-vs-2 team matches, and per-round statistics (16ers, 24ers, "4 and last", bad moves) that grow
with the winner's margin. Matches are written in time order as JSON Lines (gzipped when the name
ends in ``.gz``), the history format every command reads (``docs/replay.md``); with
``--team-share 0`` a CSV file can be written instead.

    python benchmarks/make_league.py /tmp/league-10m.jsonl.gz --matches 10000000 --players 1000000

Deterministic for a given ``--seed``. Generation is vectorised with numpy in chunks of ``CHUNK``
matches and streamed (memory is one chunk's, whatever ``--matches``); writing dominates.
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

import numpy as np
import numpy.typing as npt

CHUNK = 200_000
COUNTS = ("bad_moves", "won_by_16", "won_by_24", "won_by_4_and_last")


def _activity(rng: np.random.Generator, players: int, tail: float, busiest: float) -> npt.NDArray[np.float64]:
    """Each player's probability of taking a seat in a match: Pareto weights, normalised.

    No player's probability exceeds ``busiest`` (>= 1) times the average player's (``1 / players``).
    Uncapped, a tail of 1.2 has no finite variance and one draw can dominate: at 1 M players one
    player took 52.6% of the seats (6.96 M of 10 M matches), a league nobody runs. The weights over
    the cap are clipped to it; the cap is then the fixed point ``busiest * sum / players`` of the
    clipped sum, found by growing the clipped set until it stops changing (a few passes).
    """
    if busiest < 1.0:
        raise ValueError(f"busiest must be at least 1 (the average player), not {busiest}")
    raw = rng.pareto(tail, players) + 1.0
    over = np.zeros(players, dtype=bool)
    while True:
        cap = busiest * raw[~over].sum() / (players - busiest * over.sum())
        grown = raw > cap
        if np.array_equal(grown, over):
            weights = np.minimum(raw, cap)
            return weights / weights.sum()
        over = grown


def _counts(
    rng: np.random.Generator, n: int, margin: npt.NDArray[np.float64]
) -> dict[str, npt.NDArray[np.int64]]:
    """Per-side statistics: winners of a lopsided match score more bonus rounds; anyone may blunder."""
    lam = 0.2 + 0.8 * np.clip(margin, 0.0, 1.0)
    return {
        "bad_moves": rng.poisson(0.6, n),
        "won_by_16": rng.poisson(lam * 0.8),
        "won_by_24": rng.poisson(lam * 0.25),
        "won_by_4_and_last": rng.poisson(0.3, n),
    }


def generate(
    matches: int,
    players: int,
    *,
    seed: int = 1,
    draw_share: float = 0.03,
    team_share: float = 0.05,
    tail: float = 1.2,
    busiest: float = 1000.0,
    start: datetime = datetime(2024, 1, 1, tzinfo=UTC),
    span_days: int = 730,
) -> Iterator[str]:
    """Yield the history's lines (JSON Lines, one match each) in time order.

    ``busiest``: the most a player plays, as a multiple of the average player's matches (1,000 at
    10 M matches and 1 M players: about 21,000 matches, some 30 a day over the two years).
    """
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(_activity(rng, players, tail, busiest))

    def sit(shape: int | tuple[int, int]) -> npt.NDArray[np.int64]:
        # Inverse-CDF sampling: one binary search a seat instead of rebuilding the table per call.
        found = np.searchsorted(cdf, rng.random(shape) * cdf[-1], side="right")
        return np.minimum(found, players - 1).astype(np.int64)

    skill = rng.normal(0.0, 200.0, players)
    span = span_days * 86_400
    for lo in range(0, matches, CHUNK):
        hi = min(lo + CHUNK, matches)
        n = hi - lo
        # Each chunk draws its own sorted times in its share of the span: memory stays one chunk's.
        seconds = np.sort(
            rng.integers(lo * span // matches, max(hi * span // matches, lo * span // matches + 1), n)
        )
        seats = sit((n, 4))
        team = rng.random(n) < team_share
        # A player never sits twice in one match: redraw the few collisions one by one.
        clash = (seats[:, 0] == seats[:, 1]) | (
            team
            & (
                (seats[:, 0] == seats[:, 2])
                | (seats[:, 0] == seats[:, 3])
                | (seats[:, 1] == seats[:, 2])
                | (seats[:, 1] == seats[:, 3])
                | (seats[:, 2] == seats[:, 3])
            )
        )
        for i in np.flatnonzero(clash).tolist():
            width = 4 if team[i] else 2
            while len(set(seats[i, :width].tolist())) < width:
                seats[i, :width] = sit(width)
        ra = np.where(team, (skill[seats[:, 0]] + skill[seats[:, 1]]) / 2, skill[seats[:, 0]])
        rb = np.where(team, (skill[seats[:, 2]] + skill[seats[:, 3]]) / 2, skill[seats[:, 1]])
        pa = 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))
        u = rng.random(n)
        draw = rng.random(n) < draw_share
        a_wins = u < pa
        margin = np.abs(pa - 0.5) * 2
        win_stats = _counts(rng, n, margin)
        lose_stats = _counts(rng, n, np.zeros(n))
        for k in ("won_by_16", "won_by_24"):
            lose_stats[k] = rng.poisson(0.05, n)
        for i in range(n):
            seq = lo + i
            when = (start + timedelta(seconds=int(seconds[i]))).strftime("%Y-%m-%dT%H:%M:%S")
            winner = "draw" if draw[i] else ("a" if a_wins[i] else "b")
            w = {k: int(v[i]) for k, v in win_stats.items()}
            lz = {k: int(v[i]) for k, v in lose_stats.items()}
            sa, sb = (w, lz) if a_wins[i] else (lz, w)
            if team[i]:
                ids = [f"p{int(x)}" for x in seats[i]]
                stats = ", ".join(
                    f'"{pid}": {{"bad_moves": {s["bad_moves"]}, "won_by_16": {s["won_by_16"]}}}'
                    for pid, s in ((ids[0], sa), (ids[2], sb))
                )
                yield (
                    f'{{"match_id": "g{seq}", "played_at": "{when}", "team_a": ["{ids[0]}", "{ids[1]}"], '
                    f'"team_b": ["{ids[2]}", "{ids[3]}"], "winner": "{winner}", "stats": {{{stats}}}}}'
                )
            else:
                a, b = int(seats[i, 0]), int(seats[i, 1])
                fields = ", ".join(f'"{k}_a": {sa[k]}, "{k}_b": {sb[k]}' for k in COUNTS)
                yield (
                    f'{{"match_id": "g{seq}", "played_at": "{when}", "player_a": "p{a}", '
                    f'"player_b": "p{b}", "winner": "{winner}", {fields}}}'
                )


def _open(path: Path) -> TextIO:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "wb", compresslevel=1), encoding="utf-8")
    return path.open("w", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--matches", type=int, default=10_000_000)
    parser.add_argument("--players", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--draw-share", type=float, default=0.03)
    parser.add_argument("--team-share", type=float, default=0.05)
    parser.add_argument(
        "--busiest", type=float, default=1000.0, help="the most a player plays, in average players"
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    with _open(args.out) as out:
        for n, line in enumerate(
            generate(
                args.matches,
                args.players,
                seed=args.seed,
                draw_share=args.draw_share,
                team_share=args.team_share,
                busiest=args.busiest,
            ),
            start=1,
        ):
            out.write(line)
            out.write("\n")
            if n % 1_000_000 == 0:
                print(f"{n:,} matches, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    took = time.perf_counter() - t0
    print(f"wrote {args.matches:,} matches to {args.out} in {took:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
