"""The memory settings of the bulk commands (cli/heap.py): the C heap, the compiler's pages."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys

import pytest

from sedma_elo.cli import heap


def test_the_mmap_threshold_is_set_on_glibc() -> None:
    """On glibc (the project's Linux images) mallopt takes the threshold; in a child process."""
    code = "from sedma_elo.cli.heap import fix_mmap_threshold; print(fix_mmap_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_c_library_without_mallopt_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the C library cannot be loaded the setting is skipped, reported as not set."""

    def refuse(name: str | None) -> ctypes.CDLL:
        raise OSError(f"no {name}")

    monkeypatch.setattr(ctypes, "CDLL", refuse)
    assert heap.fix_mmap_threshold() is False


_SMAPS = """\
7f0000000000-7f0000100000 r--p 00000000 08:01 11 /venv/llvmlite/binding/libllvmlite.so
Rss:                1024 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000100000-7f0000300000 r-xp 00100000 08:01 11 /venv/llvmlite/binding/libllvmlite.so
Rss:                2048 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000300000-7f0000400000 r--p 00300000 08:01 11 /venv/llvmlite/binding/libllvmlite.so
Rss:                1024 kB
Private_Dirty:       512 kB
Anonymous:           512 kB
7f0000380000-7f0000390000 r--p 00380000 08:01 11 /venv/llvmlite/binding/libllvmlite.so
Anonymous:             0 kB
Swap:                  8 kB
7f0000400000-7f0000500000 rw-p 00400000 08:01 11 /venv/llvmlite/binding/libllvmlite.so
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000500000-7f0000600000 r-xp 00000000 08:01 12 /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000600000-7f0000700000 rw-p 00000000 00:00 0
Anonymous:             4 kB
"""


def test_only_the_librarys_clean_read_only_mappings_are_chosen() -> None:
    """The library's read-only mappings with no page of their own; not its relocated (written,
    also swapped out) or writable ones, nor another file's, nor anonymous memory."""
    assert heap._clean_mappings(_SMAPS, "libllvmlite.so") == [
        (0x7F0000000000, 0x7F0000100000),
        (0x7F0000100000, 0x7F0000300000),
    ]


# A fresh interpreter: the kernel's first run, the compiler's pages dropped, the kernel run again
# and a new function compiled (LLVM runs again from the dropped pages); what is resident of it.
_CHILD = """
import json
import numpy as np
from numba import njit
from sedma_elo.batch.history import HistoryArrays
from sedma_elo.batch.kernel import run_kernel
from sedma_elo.cli.heap import COMPILER_LIBRARY, drop_clean_pages
from sedma_elo.core.rules import Rules

def resident():
    total, mine = 0, False
    for line in open("/proc/self/smaps"):
        fields = line.split()
        if not fields[0].endswith(":"):
            mine = len(fields) > 5 and fields[5].endswith(COMPILER_LIBRARY)
        elif mine and fields[0] == "Rss:":
            total += int(fields[1])
    return total

def run():
    n = 4
    history = HistoryArrays(
        player_ids=["a", "b"], player_a=np.zeros(n, np.int32), player_b=np.ones(n, np.int32),
        winner=np.array([0, 1, 2, 0], np.int8), counts=np.zeros((n, 8), np.int32),
        match_ids=[""] * n, played_at=[""] * n, lines=np.zeros(n, np.int64),
    )
    ratings = np.full(2, 1000, np.int64)
    run_kernel(history, Rules(), ratings, np.zeros(2, np.int64))
    return ratings.tolist()

first = run()
before = resident()
dropped = drop_clean_pages()
after = resident()
print(json.dumps({"first": first, "again": run(), "before": before, "after": after,
                  "dropped": dropped, "compiled": njit(lambda x: x * 3 + 1)(4)}))
"""


def test_the_compilers_pages_are_dropped_and_still_run() -> None:
    """After the kernel's first run its compiler's pages leave the resident set; the kernel gives
    the same ratings again and numba still compiles (the pages come back from the file)."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, timeout=600
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["dropped"] > 0
    assert got["after"] < got["before"] / 4
    assert got["again"] == got["first"]
    assert got["compiled"] == 13
