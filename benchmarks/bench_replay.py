"""Whole-process replay of the ATP history: ``sedma-elo replay`` against a naive pure-Python loop.

Both run as subprocesses on the same file and write the same ratings CSV; the outputs are checked
equal. Each is run several times and the median wall time and the CPU time (user + system of the
child, from ``getrusage``) reported. ``sedma-elo`` is timed twice over: a *cold* run first, with
an empty numba cache directory (``NUMBA_CACHE_DIR``), so it compiles the kernel as a fresh
install's first run does, then *warm* runs with that cache filled. The naive script is written
plainly below: the csv module, ``int()`` per field and a per-match update of the reference rules
with numpy float32 scalars for the C# ``float`` parts.

    python benchmarks/bench_replay.py [--quick] [--runs N] [--history FILE]

Target: ours (warm) <= 0.35 x naive (issue 13; it was 0.6).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The project's shared data: $SEDMA_DATA_DIR, $SEDMA_SHARED_DIR/data, else the first shared/data beside
# the repository or beside one of its parent folders (a worktree), as the tests find it (tests/needs.py).
_CANDIDATES = [
    *([Path(os.environ["SEDMA_DATA_DIR"])] if os.environ.get("SEDMA_DATA_DIR") else []),
    *([Path(os.environ["SEDMA_SHARED_DIR"]) / "data"] if os.environ.get("SEDMA_SHARED_DIR") else []),
    *(folder / "shared" / "data" for folder in ROOT.parents),
]
DEFAULT_HISTORY = next(
    (
        folder / "atp_1991_2017.csv.gz"
        for folder in _CANDIDATES
        if (folder / "atp_1991_2017.csv.gz").is_file()
    ),
    Path("atp_1991_2017.csv.gz"),
)

NAIVE = r"""
import csv, gzip, math, sys
import numpy as np

path, out = sys.argv[1], sys.argv[2]
f32 = np.float32


def k_factor(rating):
    if rating < 1200:
        return 40
    if rating < 1800:
        return 32
    if rating < 2200:
        return 24
    return 16


def adjusted(won, bad, w16, w24, w4):
    bonus = (min(f32(w16) * f32(0.05), f32(0.15)) + min(f32(w24) * f32(0.1), f32(0.2))) + min(
        f32(w4) * f32(0.03), f32(0.09)
    )
    bonus = bonus * (f32(1.0) if won else f32(0.1))
    malus = min(f32(bad) * f32(0.02), f32(0.3))
    score = (f32(1.0 if won else 0.0) + bonus) - malus
    return float(min(max(score, f32(0.0)), f32(1.0)))


ratings, played = {}, {}
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rt", newline="") as fh:
    reader = csv.reader(fh)
    next(reader)
    for row in reader:
        a, b, winner = row[2], row[3], row[4]
        if a == b:
            continue  # a player against themself: a bad row, skipped like --skip-bad-rows
        c = [int(x) for x in row[5:13]]
        ra, rb = ratings.get(a, 1000), ratings.get(b, 1000)
        a_won = winner == "a"
        sa = adjusted(a_won, c[0], c[2], c[4], c[6])
        sb = adjusted(not a_won, c[1], c[3], c[5], c[7])
        ea = 1.0 / (1.0 + math.pow(10.0, (rb - ra) / 400.0))
        eb = 1.0 / (1.0 + math.pow(10.0, (ra - rb) / 400.0))
        ratings[a] = round(ra + k_factor(ra) * (sa - ea))
        ratings[b] = round(rb + k_factor(rb) * (sb - eb))
        played[a] = played.get(a, 0) + 1
        played[b] = played.get(b, 0) + 1

with open(out, "w") as fh:
    fh.write("player_id,rating,matches_played\n")
    for pid, rating in sorted(ratings.items(), key=lambda kv: (-kv[1], kv[0])):
        fh.write(f"{pid},{rating},{played[pid]}\n")
"""


# The same script with the adjusted score memoised per (won, counts): still plain Python, but it
# skips most float32 scalar work; shown to make the comparison honest, not the target.
NAIVE_MEMO = NAIVE.replace(
    "def adjusted(", "import functools\n@functools.lru_cache(maxsize=None)\ndef adjusted("
)


def _time(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one timed run each")
    parser.add_argument("--runs", type=int, default=5, help="timed runs each (default 5)")
    parser.add_argument("--history", type=Path, default=DEFAULT_HISTORY, help="history file")
    args = parser.parse_args()
    if not args.history.is_file():
        parser.error(f"history file {args.history} not found (pass --history, or set SEDMA_DATA_DIR)")
    runs = 1 if args.quick else args.runs
    exe = shutil.which("sedma-elo", path=str(Path(sys.executable).parent)) or "sedma-elo"
    with tempfile.TemporaryDirectory() as tmp:
        naive_py, memo_py = Path(tmp) / "naive.py", Path(tmp) / "memo.py"
        naive_py.write_text(NAIVE)
        memo_py.write_text(NAIVE_MEMO)
        ours_out, naive_out, memo_out = (
            Path(tmp) / "ours.csv",
            Path(tmp) / "naive.csv",
            Path(tmp) / "memo.csv",
        )
        ours_cmd = [exe, "replay", str(args.history), "--skip-bad-rows", "--ratings-out", str(ours_out)]
        naive_cmd = [sys.executable, str(naive_py), str(args.history), str(naive_out)]
        memo_cmd = [sys.executable, str(memo_py), str(args.history), str(memo_out)]
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "numba-cache")}
        cold = _time(ours_cmd, env)  # compiles the kernel into the empty cache
        ours, naive, memo = [], [], []
        for _ in range(runs):
            ours.append(_time(ours_cmd, env))
            naive.append(_time(naive_cmd))
            memo.append(_time(memo_cmd))
        same = ours_out.read_text() == naive_out.read_text() == memo_out.read_text()
    n_wall = statistics.median(w for w, _ in naive)
    n_cpu = statistics.median(c for _, c in naive)
    print(f"history: {args.history} ({runs} timed runs each; medians; CPU = user + system of the process)")
    print(f"{'':34}{'wall s':>9}{'CPU s':>9}{'wall / naive':>14}{'CPU / naive':>13}")

    def line(name: str, wall: float, cpu: float) -> None:
        print(f"{name:34}{wall:9.2f}{cpu:9.2f}{wall / n_wall:14.2f}{cpu / n_cpu:13.2f}")

    line("sedma-elo replay, cold (compiles)", *cold)
    o_wall = statistics.median(w for w, _ in ours)
    line("sedma-elo replay, warm", o_wall, statistics.median(c for _, c in ours))
    line("naive pure Python", n_wall, n_cpu)
    line(
        "naive, memoised score (extra)",
        statistics.median(w for w, _ in memo),
        statistics.median(c for _, c in memo),
    )
    print(
        f"ratio ours/naive (warm, wall): {o_wall / n_wall:.2f} (target <= 0.35); cold: {cold[0] / n_wall:.2f}"
    )
    print(f"outputs identical: {same}")
    if not same:
        sys.exit("outputs differ")


if __name__ == "__main__":
    main()
