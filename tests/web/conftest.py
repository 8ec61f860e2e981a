"""Fixtures of the web tests: headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .browser import CHROMIUM_ARGS, require_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (each test opens its own context).

    Not per session: Playwright's sync API keeps an asyncio loop marked as running in the main
    thread while it is open, so every later ``asyncio.run`` of the session would fail.
    """
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
def seeded_db(tmp_path: Path) -> str:
    """The URL of a fresh SQLite database holding the seed history, applied through the service layer."""
    from sedma_elo.service import Ledger, MatchIn, submission_from_payload
    from sedma_elo.storage import open_database

    from .seed import seed_matches

    url = f"sqlite:///{tmp_path / 'site.db'}"
    db = open_database(url)
    try:
        ledger = Ledger(db)
        ledger.ensure_version()
        outcomes = ledger.apply([submission_from_payload(MatchIn.model_validate(m)) for m in seed_matches()])
        assert all(o.status == "created" for o in outcomes), outcomes
    finally:
        db.dispose()
    return url


@pytest.fixture
def site(seeded_db: str) -> Iterator[Site]:
    """The real app (JSON API and pages) over the seeded database, with a TestClient."""
    from fastapi.testclient import TestClient

    from sedma_elo.service import ServiceSettings, create_app

    app = create_app(ServiceSettings(database_url=seeded_db))
    with TestClient(app) as client:
        yield Site(app, client, app.state.ledger)
