"""The C heap setting of the bulk commands (cli/heap.py)."""

from __future__ import annotations

import ctypes
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
