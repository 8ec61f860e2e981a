"""Helpers for the browser tests: a real uvicorn server in a thread and Debian's headless Chromium.

Chromium is Debian's package at ``/usr/bin/chromium`` (``scripts/ensure-chromium.sh`` installs it);
Playwright only drives it (``executable_path``): no browser is ever downloaded. Playwright starts
Chromium with a fresh temporary ``--user-data-dir`` of its own for every launch.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn

CHROMIUM = Path(os.environ.get("SEDMA_ELO_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Screenshots are test artifacts kept outside the repository (override with SEDMA_ELO_SCREENSHOTS).
ARTIFACTS = Path(
    os.environ.get("SEDMA_ELO_SCREENSHOTS", Path(tempfile.gettempdir()) / "sedma-elo-screenshots")
)
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def require_chromium() -> Path:
    """The Chromium binary; skip the test when it is missing (fail on CI, where it must be there)."""
    if CHROMIUM.exists():
        return CHROMIUM
    message = f"{CHROMIUM} is missing: run scripts/ensure-chromium.sh (make test does)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 on a free port in a thread; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="auto")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


@dataclass
class ConsoleLog:
    """Console errors, uncaught page errors and failed requests seen by one browser page."""

    errors: list[str] = field(default_factory=list)

    def attach(self, page: Any) -> None:
        """Start recording ``page``'s problems."""
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(f"console: {msg.text}"))
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("requestfailed", lambda req: self.errors.append(f"request failed: {req.url} {req.failure}"))

    def assert_clean(self) -> None:
        """Fail when the page logged any error."""
        assert not self.errors, "the browser reported errors:\n" + "\n".join(self.errors)


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot of ``page`` as ``<ARTIFACTS>/<name>.png``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
