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
import gc, sys
import pytest
from fastapi.testclient import TestClient
from sedma_elo.service import ServiceSettings, create_app, runtime
runtime.tune_process()
with TestClient(create_app(ServiceSettings(database_url=sys.argv[1], rate_limit=0))) as client:
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


def test_serving_freezes_after_start_and_keeps_the_switch_interval(tmp_path: Path) -> None:
    """After ``tune_process`` (what ``serve`` calls) a started app runs frozen, the interval untouched."""
    out = subprocess.run(
        [sys.executable, "-c", _SERVE_LIKE, f"sqlite:///{tmp_path}/ledger.db"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    assert float(out[0]) == pytest.approx(0.005)  # CPython's default: 0.1 ms cost writes (runtime.py)
    assert out[1] == "True"
