"""In headless Chromium: /docs (Swagger UI) and /redoc render every operation with no request
leaving 127.0.0.1 (requests elsewhere are logged and aborted, so an offline server looks the same)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sedma_elo.service import ServiceSettings, create_app

from .browser import DESKTOP, ConsoleLog, live_server

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The real app on a fresh SQLite file, served by uvicorn on 127.0.0.1; yields its base URL."""
    with live_server(create_app(ServiceSettings(database_url=f"sqlite:///{tmp_path}/docs.db"))) as base:
        yield base


def _operations(base: str) -> list[tuple[str, str]]:
    with urllib.request.urlopen(base + "/openapi.json", timeout=10) as response:
        paths = json.loads(response.read())["paths"]
    return [(method.upper(), path) for path, ops in paths.items() for method in ops]


def _render(browser: Any, base: str, path: str, ready: str, script: str) -> Any:
    """Open ``path``, wait for ``ready``, return ``script`` run on all ``ready`` elements.

    Fails when the page asked for anything outside ``base`` (aborted) or logged an error.
    """
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    outside: list[str] = []

    def guard(route: Any) -> None:
        url = route.request.url
        if url.startswith((base + "/", "data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    log = ConsoleLog()
    log.attach(page)
    try:
        page.goto(base + path)
        page.wait_for_selector(ready, state="attached", timeout=30_000)
        result = page.eval_on_selector_all(ready, script)
        page.wait_for_load_state("networkidle")
    finally:
        context.close()
    assert outside == [], f"{path} asked for files elsewhere: {outside}"
    log.assert_clean()
    return result


def test_swagger_ui_renders_every_operation_offline(browser: Any, server: str) -> None:
    """/docs shows one operation block per (method, path) of /openapi.json; nothing is fetched elsewhere."""
    shown = _render(
        browser,
        server,
        "/docs",
        ".opblock",
        """els => els.map(e => [e.querySelector('.opblock-summary-method').textContent.trim(),
                               e.querySelector('.opblock-summary-path').getAttribute('data-path')])""",
    )
    assert sorted(map(tuple, shown)) == sorted(_operations(server))


def test_redoc_renders_every_operation_offline(browser: Any, server: str) -> None:
    """/redoc lists every operation of /openapi.json in its menu; nothing is fetched elsewhere."""
    count = _render(browser, server, "/redoc", "li[data-item-id*='operation/']", "els => els.length")
    assert count == len(_operations(server))
