"""The match page of an analysed game in headless Chromium, on a phone and on a desktop.

The page must load without a console error, fit the screen's width, show every round's tricks, and
the malus line's link must bring the reader to the bad move it names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sedma_elo.service import ServiceSettings, create_app

from .browser import DESKTOP, PHONE, ConsoleLog, live_server, screenshot
from .games_seed import GAME_ID, analysed_game_db

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def game_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Any]]]:
    """A live server over a database with the analysed example game; its base URL and the analysis."""
    url, analysis = analysed_game_db(Path(tmp_path_factory.mktemp("game-browser")) / "site.db")
    with live_server(create_app(ServiceSettings(database_url=url))) as base:
        yield base, analysis


@pytest.mark.parametrize(
    ("name", "viewport", "options"),
    [("desktop", DESKTOP, {}), ("phone", PHONE, {"is_mobile": True, "has_touch": True})],
)
def test_the_game_on_the_match_page(
    browser: Any, game_server: tuple[str, dict[str, Any]], name: str, viewport: dict[str, int], options: Any
) -> None:
    """Rounds and tricks are shown, nothing scrolls sideways, the malus link targets its bad move."""
    base, analysis = game_server
    context = browser.new_context(viewport=viewport, locale="en-US", **options)
    page = context.new_page()
    log = ConsoleLog()
    log.attach(page)
    try:
        page.goto(f"{base}/matches/{GAME_ID}")
        assert page.locator("section.round").count() == len(analysis["rounds"])
        assert page.locator("table.tricks tbody tr").count() == sum(
            sum(r["tricks"]) for r in analysis["rounds"]
        )
        assert page.locator("li.bad-move").count() == len(analysis["bad_moves"])
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"the game is {width[0]} px wide on a {width[1]} px screen"
        first = analysis["bad_moves"][0]
        anchor = f"bad-r{first['round']}-m{first['move']}"
        page.locator(f"tr.malus .bad-links a[href='#{anchor}']").first.click()
        assert page.evaluate("() => location.hash") == f"#{anchor}"
        target = page.locator(f"#{anchor}")
        assert target.is_visible() and target.evaluate("e => e.matches(':target')")
        box = target.bounding_box()
        assert box is not None and 0 <= box["y"] < viewport["height"]  # scrolled into view
        screenshot(page, f"e2e-game-{name}")
        log.assert_clean()
    finally:
        context.close()
