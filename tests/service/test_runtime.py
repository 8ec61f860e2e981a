"""Process-wide tuning belongs to the serving process (``serve``), not to the app factory."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sedma_elo.service import ServiceSettings, create_app

_SERVE_LIKE = """
import gc, os, sys
import pytest
from fastapi.testclient import TestClient
from sedma_elo.service import ServiceSettings, create_app, runtime
from sedma_elo.service.app import app_from_env
if sys.argv[2] == "unfrozen":
    runtime.tune_process()
    app = create_app(ServiceSettings(database_url=sys.argv[1], rate_limit=0))
else:  # what each process of `serve --workers N` runs
    os.environ.update(SEDMA_ELO_DATABASE_URL=sys.argv[1], SEDMA_ELO_RATE_LIMIT="0")
    app = app_from_env()
with TestClient(app) as client:
    assert client.get("/healthz").status_code == 200
    print(sys.getswitchinterval(), gc.get_freeze_count() > 0)
"""


def test_the_app_factory_changes_nothing_process_wide(tmp_path: Path) -> None:
    """Building and running an app leaves the GIL switch interval and the frozen heap as they were."""
    before = (sys.getswitchinterval(), gc.get_freeze_count())
    app = create_app(ServiceSettings(database_url=f"sqlite:///{tmp_path}/ledger.db", rate_limit=0))
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        assert (sys.getswitchinterval(), gc.get_freeze_count()) == before
    assert (sys.getswitchinterval(), gc.get_freeze_count()) == before


def _serve_like(tmp_path: Path, how: str) -> list[str]:
    """The switch interval and whether the heap is frozen in a started app (``how``: ``serve``, the
    app of serve's worker processes; ``unfrozen``, after ``tune_process()``)."""
    return subprocess.run(
        [sys.executable, "-c", _SERVE_LIKE, f"sqlite:///{tmp_path}/ledger.db", how],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()


def test_serving_freezes_the_heap_and_leaves_the_switch_interval(tmp_path: Path) -> None:
    """The app that ``serve`` runs in each process, started, runs frozen at the default interval."""
    out = _serve_like(tmp_path, "serve")
    assert float(out[0]) == pytest.approx(0.005)  # CPython's default: 0.1 ms cost writes (runtime.py)
    assert out[1] == "True"  # full collections stopped the loop 57-97 ms under reads (runtime.py)


def test_tuning_without_freeze_leaves_the_heap_unfrozen(tmp_path: Path) -> None:
    """``tune_process()`` alone, the benchmark's ``unfrozen`` variant, leaves the heap unfrozen."""
    out = _serve_like(tmp_path, "unfrozen")
    assert out[1] == "False"
