"""What the app checks as it starts (service/app.py)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from conftest import make_api


def test_an_index_at_fault_is_logged_as_the_app_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A dropped index is a warning naming it when the app starts, which still serves."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    for _ in make_api(url):  # creates and migrates the ledger
        pass
    with sqlite3.connect(tmp_path / "ledger.db") as conn:
        conn.execute("DROP INDEX ix_player_ratings_rank")
    with caplog.at_level(logging.WARNING, logger="sedma_elo.service.app"):
        for api in make_api(url):
            assert api.client.get("/readyz").status_code == 200
    warned = [r.getMessage() for r in caplog.records if r.name == "sedma_elo.service.app"]
    assert [w.split(":")[0] for w in warned] == ["index ix_player_ratings_rank of player_ratings is missing"]
