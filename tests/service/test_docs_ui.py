"""/docs and /redoc come from the package's own files: no URL in them leaves the server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Api, make_api


@pytest.fixture
def api(tmp_path: Any) -> Iterator[Api]:
    """An app on a fresh SQLite file."""
    yield from make_api(f"sqlite:///{tmp_path}/ledger.db")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_only_local_files(api: Api, page: str) -> None:
    """Every src/href of the page is a path on this server, and each of them answers 200."""
    html = api.get(page).text
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html) + re.findall(r"url: *'([^']+)'", html)
    urls += re.findall(r"spec-url=\"([^\"]+)\"", html)
    assert urls and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
    for url in urls:
        assert api.get(url).status_code == 200, url
    assert "http://" not in html and "https://" not in html


def test_only_listed_assets_are_served(api: Api) -> None:
    """A file of the static folder that is not listed (the licence text) and path tricks are 404."""
    assert api.get("/docs/assets/swagger-ui/LICENSE").status_code == 404
    assert api.get("/docs/assets/swagger-ui/..%2F..%2Fapp.py").status_code == 404


def test_assets_have_their_media_types(api: Api) -> None:
    """The script is JavaScript and the stylesheet CSS (browsers refuse mislabelled ones)."""
    js = api.get("/docs/assets/swagger-ui/swagger-ui-bundle.js")
    css = api.get("/docs/assets/swagger-ui/swagger-ui.css")
    assert js.headers["content-type"].startswith("text/javascript") and len(js.content) > 100_000
    assert css.headers["content-type"].startswith("text/css")
