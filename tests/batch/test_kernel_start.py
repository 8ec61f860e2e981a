"""How the batch kernel starts numba: without the modules it never uses (``UNUSED_BY_NUMBA``)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sedma_elo.batch.kernel import _absent

SRC = Path(__file__).resolve().parents[2] / "src"

# A fresh interpreter: the kernel's first run, then a compiled np.dot (it needs scipy's BLAS, which
# numba must still find once the kernel has started), then what the process had imported.
_CHILD = """
import json, sys
import numpy as np
from sedma_elo.batch.history import HistoryArrays
from sedma_elo.batch.kernel import run_kernel
from sedma_elo.core.rules import Rules
n = 3
history = HistoryArrays(
    player_ids=["a", "b"], player_a=np.zeros(n, np.int32), player_b=np.ones(n, np.int32),
    winner=np.zeros(n, np.int8), counts=np.zeros((n, 8), np.int32), match_ids=[""] * n,
    played_at=[""] * n, lines=np.zeros(n, np.int64),
)
ratings = np.full(2, 1000, np.int64)
run_kernel(history, Rules(), ratings, np.zeros(2, np.int64))
after_kernel = sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy."))
from numba import njit
dot = njit(lambda a, b: np.dot(a, b))(np.arange(3.0), np.arange(3.0))
print(json.dumps({"ratings": ratings.tolist(), "scipy": after_kernel, "dot": float(dot)}))
"""


@pytest.fixture(scope="module")
def child() -> dict[str, object]:
    """What the fresh interpreter printed."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600, check=True
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
