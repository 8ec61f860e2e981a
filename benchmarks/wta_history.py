"""Build a second real history, WTA results, in the project's match-history format.

Usage: python benchmarks/wta_history.py SOURCE_DIR OUT.csv.gz [FIRST_YEAR] [LAST_YEAR]

SOURCE_DIR holds Jeff Sackmann's ``tennis_wta`` files (``wta_matches_YYYY.csv`` and
``wta_matches_qual_itf_YYYY.csv``; licence CC BY-NC-SA 4.0, for testing and research, not to be
shipped). The mapping is the one of the ATP file in ``../shared/data``: each set plays the part
of a round; a set won 6-1 is a "16er", 6-0 a "24er", 7-6 a "4 and last"; double faults are bad
moves (0 where the source has no statistics); retirements, walkovers and defaults are left out.
Matches are ordered by tournament date, tournament, round (qualifying first, the final last) and
match number; side a is the player with the smaller id, so the side says nothing about the result.
The output is never committed: it is a check on a history that no tuning has seen.
"""

from __future__ import annotations

import csv
import gzip
import re
import sys
from pathlib import Path

from sedma_elo.batch.history import COLUMNS

ROUNDS = ["Q1", "Q2", "Q3", "Q4", "ER", "RR", "R128", "R64", "R32", "R16", "QF", "SF", "BR", "F"]
SET = re.compile(r"^(\d+)-(\d+)(\(\d+\))?$")


def sets_of(score: str) -> list[tuple[int, int]] | None:
    """The games of each set (winner's, loser's), or None for a match not played to its end."""
    parts = score.split()
    out = []
    for part in parts:
        m = SET.match(part)
        if m is None:
            return None
        out.append((int(m.group(1)), int(m.group(2))))
    return out or None


def kind(games: tuple[int, int]) -> int | None:
    """Index of the "round" kind a set is (0: 16er, 1: 24er, 2: 4 and last) from the set winner's side."""
    hi, lo = max(games), min(games)
    return {(6, 1): 0, (6, 0): 1, (7, 6): 2}.get((hi, lo))


def rows(source: Path, first: int, last: int) -> list[tuple[tuple[str, str, int, int], list[str]]]:
    out = []
    for year in range(first, last + 1):
        for name in (f"wta_matches_{year}.csv", f"wta_matches_qual_itf_{year}.csv"):
            path = source / name
            if not path.exists():
                continue
            with path.open(encoding="utf-8", errors="replace", newline="") as f:
                for r in csv.DictReader(f):
                    sets = sets_of(r["score"].strip())
                    w, lo = r["winner_id"].strip(), r["loser_id"].strip()
                    date = r["tourney_date"].strip()
                    if sets is None or not w or not lo or w == lo or len(date) != 8:
                        continue
                    counts = {w: [0, 0, 0], lo: [0, 0, 0]}
                    for games in sets:
                        k = kind(games)
                        if k is not None:
                            counts[w if games[0] > games[1] else lo][k] += 1
                    df = {w: r.get("w_df", "").strip(), lo: r.get("l_df", "").strip()}
                    a, b = sorted((w, lo), key=lambda x: (len(x), x))
                    played = f"{date[:4]}-{date[4:6]}-{date[6:]}"
                    match_id = f"{r['tourney_id']}-{r['match_num']}-{a}-{b}"
                    row = [
                        match_id,
                        played,
                        f"wta-{a}",
                        f"wta-{b}",
                        "a" if w == a else "b",
                        str(int(float(df[a]))) if df[a] else "0",
                        str(int(float(df[b]))) if df[b] else "0",
                        str(counts[a][0]),
                        str(counts[b][0]),
                        str(counts[a][1]),
                        str(counts[b][1]),
                        str(counts[a][2]),
                        str(counts[b][2]),
                    ]
                    rnd = ROUNDS.index(r["round"]) if r["round"] in ROUNDS else len(ROUNDS)
                    num = int(r["match_num"]) if r["match_num"].isdigit() else 0
                    out.append(((played, r["tourney_id"], rnd, num), row))
    out.sort(key=lambda item: item[0])
    return out


def main(argv: list[str]) -> None:
    source, target = Path(argv[0]), Path(argv[1])
    first = int(argv[2]) if len(argv) > 2 else 1991
    last = int(argv[3]) if len(argv) > 3 else 2024
    built = rows(source, first, last)
    seen: set[str] = set()
    with gzip.open(target, "wt", encoding="utf-8", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(COLUMNS)
        for _, row in built:
            if row[0] in seen:  # the source repeats a few matches: keep the first
                continue
            seen.add(row[0])
            out.writerow(row)
    print(f"{len(seen)} matches {first}-{last} written to {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
