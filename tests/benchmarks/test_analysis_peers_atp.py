"""benchmarks/analysis_peers_atp.py: scoring the runs on the last matches only (`tail`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from sedma_elo.batch.history import COLUMNS

from .script import load_script

N, TAIL = 40, 10


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    """The script, loaded from its file."""
    return load_script("analysis_peers_atp")


def _history(tmp_path: Path) -> Path:
    names = ["ann", "bob", "cyd", "dan", "eve"]
    rows = [
        f"m{i},2024-01-{1 + i % 28:02d},{names[i % 5]},{names[(i + 1 + i // 5) % 5 or 1]},a,0,0,0,0,0,0,0,0"
        for i in range(N)
    ]
    rows = [r for r in rows if r.split(",")[2] != r.split(",")[3]]
    path = tmp_path / "h.csv"
    path.write_text("\n".join([",".join(COLUMNS), *rows]) + "\n", encoding="utf-8")
    return path


def _save(outdir: Path, stem: str, p: np.ndarray, params: dict[str, int]) -> None:
    np.savez(outdir / f"{stem}.npz", p=p)
    meta = {"system": stem, "initial_rating": None, "params": params, "seconds": 1.0, "rules_file": None}
    (outdir / f"{stem}.json").write_text(json.dumps(meta), encoding="utf-8")


def test_tail_scores_only_the_last_matches(
    peers: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run on the last matches is scored on those only, beside the reference, not on the 0.5 before."""
    history = _history(tmp_path)
    n = len(history.read_text(encoding="utf-8").splitlines()) - 1
    outdir = tmp_path / "runs"
    outdir.mkdir()
    _save(outdir, "sedma-0", np.full(n, 0.5), {})
    tail = np.full(n, 0.5)
    tail[n - TAIL :] = 0.9  # side a wins every match of the history
    _save(outdir, "kickscore-0", tail, {"scored_from": n - TAIL})
    peers.tail_scores(str(history), outdir)
    out = capsys.readouterr().out
    assert f"last {TAIL} matches (from {n - TAIL})" in out
    assert f"| kickscore-0 | {-math.log(0.9):.5f} |" in out
    assert f"| sedma-0 | {math.log(2):.5f} | - | - |" in out
