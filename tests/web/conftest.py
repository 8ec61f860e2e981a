"""Fixtures of the web tests: headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .browser import CHROMIUM_ARGS, require_chromium


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the whole session (each test opens its own context)."""
    executable = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(executable), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Site:
    """A seeded service: its FastAPI app, a TestClient and the service layer (the ``Ledger``)."""

    def __init__(self, app: Any, client: Any, ledger: Any) -> None:
        self.app = app
        self.client = client
        self.ledger = ledger


@pytest.fixture
def site() -> Iterator[Site]:
    """The seed history applied through the service layer, served by the pages' router."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from sedma_elo import PlayerStats
    from sedma_elo.web import router

    from .fake_service import FakeLedger
    from .seed import seed_matches

    ledger = FakeLedger()
    for m in seed_matches():
        ledger.post(
            m["match_id"],
            m["player_a"],
            m["player_b"],
            m["winner"],
            PlayerStats(**m["stats"]["a"]),
            PlayerStats(**m["stats"]["b"]),
            m["played_at"],
        )
    app = FastAPI()
    app.state.ledger = ledger
    app.include_router(router)
    with TestClient(app) as client:
        yield Site(app, client, ledger)
