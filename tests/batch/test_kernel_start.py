"""How the batch kernel starts numba (without the modules it never uses), and its short runs."""

from __future__ import annotations

import importlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sedma_elo import Match, PlayerStats, rate
from sedma_elo.batch.history import HistoryArrays
from sedma_elo.batch.kernel import _absent, run_kernel
from sedma_elo.core.rules import load_rules

SRC = Path(__file__).resolve().parents[2] / "src"

# A fresh interpreter: the kernel loaded, then run as the ledger's bulk path runs it (rows of a
# chunk, a rule set with games played) and as a history runs it, counting what numba compiled or
# loaded after the load; then a compiled np.dot (it needs scipy's BLAS, which numba must still
# find once the kernel has started), then what the process had imported.
_CHILD = """
import json, sys
import numpy as np
from sedma_elo.batch.history import HistoryArrays
from sedma_elo.batch.kernel import load_kernel, run_kernel
from sedma_elo.core.rules import Rules, load_rules
from sedma_elo.service.ledger import bulk
parts = []
load_kernel(lambda: parts.append(1))
from sedma_elo.batch import _kernel_jit as jit
names = ("replay_loop", "expected_table", "k_games_table")
loaded = [len(getattr(jit, name).signatures) for name in names]
rows = np.zeros((4, 22), np.int64)
rows[:, 0] = [1, 2, 3, 4]
rows[:, 2], rows[:, 3], rows[:, 4], rows[:, 5] = 0, -1, 1, -1
state = bulk.KeyState.fresh(2, Rules())
games_rules = load_rules(sys.argv[1])
bulk.rate_chunk(None, "?", rows, games_rules, state, bulk.Blanks(2))
n = 3
history = HistoryArrays(
    player_ids=["a", "b"], player_a=np.zeros(n, np.int32), player_b=np.ones(n, np.int32),
    winner=np.zeros(n, np.int8), counts=np.zeros((n, 8), np.int32), match_ids=[""] * n,
    played_at=[""] * n, lines=np.zeros(n, np.int64),
)
ratings = np.full(2, 1000, np.int64)
run_kernel(history, Rules(), ratings, np.zeros(2, np.int64))
after = [len(getattr(jit, name).signatures) for name in names]
after_kernel = sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy."))
from numba import njit
dot = njit(lambda a, b: np.dot(a, b))(np.arange(3.0), np.arange(3.0))
print(json.dumps({"ratings": ratings.tolist(), "scipy": after_kernel, "dot": float(dot),
                  "parts": len(parts), "loaded": loaded, "after": after}))
"""


@pytest.fixture(scope="module")
def child() -> dict[str, object]:
    """What the fresh interpreter printed."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    games_rules = Path(__file__).resolve().parents[2] / "docs" / "atp_tuned_rules.toml"
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(games_rules)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_kernel_start_imports_no_scipy(child: dict[str, object]) -> None:
    """A process that runs the kernel has not imported scipy (16 MB of verify's fixed memory)."""
    assert child["scipy"] == []
    ratings = child["ratings"]
    assert isinstance(ratings, list) and ratings[0] > 1000 > ratings[1]  # a wins all three


def test_np_dot_compiles_after_the_kernel_started(child: dict[str, object]) -> None:
    """numba still compiles np.dot (scipy's BLAS) in a process whose kernel started without it."""
    assert child["dot"] == 0.0 * 0.0 + 1.0 * 1.0 + 2.0 * 2.0


def test_absent_hides_a_module_for_the_block_only() -> None:
    """A module not imported yet fails to import inside the block and imports after it."""
    name = "sedma_elo_no_such_module_yet"
    sys.modules.pop("colorsys", None)
    with _absent(("colorsys", name)) as hidden:
        assert hidden == ["colorsys", name]
        with pytest.raises(ImportError):
            importlib.import_module("colorsys")
    assert name not in sys.modules
    assert importlib.import_module("colorsys").hsv_to_rgb(0.0, 0.0, 1.0) == (1.0, 1.0, 1.0)


def test_absent_leaves_an_imported_module_alone() -> None:
    """A module already imported is neither hidden nor removed."""
    module = importlib.import_module("json")
    with _absent(("json",)) as hidden:
        assert hidden == []
        assert importlib.import_module("json") is module
    assert sys.modules["json"] is module


def test_load_kernel_loads_all_the_kernel_runs(child: dict[str, object]) -> None:
    """After ``load_kernel`` (three parts), running the kernel on a ledger chunk under rules with
    games played, and on a history, loads or compiles nothing more."""
    assert child["parts"] == 3
    assert child["after"] == child["loaded"] == [1, 1, 1]


def test_short_runs_among_many_players_rate_as_rate_does() -> None:
    """Runs of three matches among 400 players (the games table bounded by the run's players) give
    a loop of ``rate``'s ratings and games, carried from run to run, under games-played rules."""
    rules = load_rules(Path(__file__).resolve().parents[2] / "docs" / "atp_tuned_rules.toml")
    assert rules.uses_games_played
    rng = random.Random(7)
    names = [f"p{i}" for i in range(400)]
    matches = []
    for _ in range(60):
        a, b = rng.sample(names[:8], 2)
        winner = rng.choice(["a", "b", "draw"])
        matches.append(Match.single(a, b, winner, PlayerStats(rng.randint(0, 3)), PlayerStats(0, 1)))
    ratings_d: dict[str, int] = {}
    games_d: dict[str, int] = {}
    for m in matches:
        for c in rate(m, ratings_d, rules, games_played=games_d).changes:
            ratings_d[c.player_id] = c.rating_after
            games_d[c.player_id] = games_d.get(c.player_id, 0) + 1
    whole = HistoryArrays.from_matches(matches)
    index = {p: i for i, p in enumerate(whole.player_ids)}
    ids = list(whole.player_ids) + [p for p in names if p not in index]
    ratings = np.full(len(ids), rules.initial_rating, dtype=np.int64)
    games = np.zeros(len(ids), dtype=np.int64)
    for start in range(0, len(matches), 3):
        run = whole.part(slice(start, start + 3))
        run_kernel(HistoryArrays(**{**run.__dict__, "player_ids": ids}), rules, ratings, games)
    assert {p: int(ratings[i]) for i, p in enumerate(ids) if games[i]} == ratings_d
    assert {p: int(games[i]) for i, p in enumerate(ids) if games[i]} == games_d
