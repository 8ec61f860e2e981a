"""End to end in headless Chromium: a seeded service on a real server, leaderboard to player to match.

Each page must load without a console error, show the same ratings as the JSON API, fit a phone's
width, and show times in the viewer's zone. Screenshots go to ``browser.ARTIFACTS`` (outside the repository).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from sedma_elo.service import ServiceSettings, create_app

from .browser import DESKTOP, PHONE, ConsoleLog, live_server, screenshot
from .seed import XSS_ID

pytestmark = pytest.mark.browser


@pytest.fixture
def server(seeded_db: str) -> Iterator[str]:
    """The real app over the seeded database, served by uvicorn on 127.0.0.1; yields its base URL."""
    with live_server(create_app(ServiceSettings(database_url=seeded_db))) as base:
        yield base


def _open(browser: Any, viewport: dict[str, int], **options: Any) -> tuple[Any, Any, ConsoleLog]:
    context = browser.new_context(viewport=viewport, locale="en-US", **options)
    page = context.new_page()
    log = ConsoleLog()
    log.attach(page)
    return context, page, log


def _api(base: str, path: str) -> Any:
    """The JSON API's answer to GET ``path`` on the live server."""
    with urllib.request.urlopen(base + path, timeout=10) as answer:
        return json.loads(answer.read())


def test_leaderboard_player_and_match_in_a_browser(browser: Any, server: str) -> None:
    """Leaderboard -> player -> match by clicking links; every rating shown equals the service's."""
    context, page, log = _open(browser, DESKTOP, timezone_id="Asia/Tokyo")
    try:
        page.goto(server + "/?all=1")
        rows = page.locator("#leaderboard tbody tr")
        shown = [
            (
                rows.nth(i).get_attribute("data-player"),
                int(rows.nth(i).locator("td.rating .value").inner_text()),
            )
            for i in range(rows.count())
        ]
        expected = [(i["player_id"], i["rating"]) for i in _api(server, "/v1/leaderboard?limit=50")["items"]]
        assert shown == expected
        screenshot(page, "e2e-leaderboard-desktop")

        page.get_by_role("link", name="alice", exact=True).click()
        page.wait_for_url("**/players/alice")
        api_player = _api(server, "/v1/players/alice")
        assert page.locator("#player-rating").inner_text() == str(api_player["rating"])
        assert page.locator("#player-matches").inner_text() == str(api_player["matches_played"])
        # The wide chart on a desktop: the provisional part (first 10 matches) dashed, then solid.
        assert page.locator(".rating-chart.wide polyline.line").count() == 2
        assert page.locator(".rating-chart.wide").is_visible()
        assert not page.locator(".rating-chart.narrow").is_visible()
        first_time = page.locator("#history tbody tr").first.locator("time")
        # The match list shows days (in UTC): the local-time script leaves them alone.
        assert (
            first_time.get_attribute("data-date-only") == ""
            and first_time.get_attribute("data-local") is None
        )
        assert first_time.inner_text() == "Nov 17, 2026"
        screenshot(page, "e2e-player-desktop")

        page.goto(server + "/players/alice")
        page.locator('.pager a[rel="next"]').click()
        page.wait_for_url("**/players/alice?before=*")
        page.locator('tr[data-match="m-001"] td.when a').click()
        page.wait_for_url("**/matches/m-001")
        sections = page.locator("section.explain")
        after = {
            sections.nth(i).get_attribute("data-player"): sections.nth(i).get_attribute("data-rating-after")
            for i in range(sections.count())
        }
        api_match = _api(server, "/v1/matches/m-001")
        assert after == {c["player_id"]: str(c["rating_after"]) for c in api_match["changes"]}
        # 2026-11-01 12:00 UTC is 21:00 in Tokyo (UTC+9, no daylight saving time).
        assert page.locator("dl.facts time").inner_text() == "Nov 1, 2026, 9:00 PM"
        screenshot(page, "e2e-match-desktop")
        log.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/", "/players/alice", "/matches/m-001"])
def test_pages_fit_a_phone(browser: Any, server: str, path: str) -> None:
    """On a 390 px wide phone no page scrolls sideways and the console stays clean."""
    context, page, log = _open(browser, PHONE, is_mobile=True, has_touch=True)
    try:
        page.goto(server + path)
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"{path} is {width[0]} px wide on a {width[1]} px screen"
        name = {"/": "leaderboard", "/players/alice": "player", "/matches/m-001": "match"}[path]
        screenshot(page, f"e2e-{name}-phone")
        log.assert_clean()
    finally:
        context.close()


def test_hostile_player_id_does_not_run(browser: Any, server: str) -> None:
    """A player id with a <script> tag shows as text and runs nothing."""
    context, page, log = _open(browser, DESKTOP)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(server + "/players/" + quote(XSS_ID, safe=""))
        assert page.locator("h1.player-name").inner_text() == XSS_ID
        page.goto(server + "/?all=1")  # the player is provisional: listed when asked
        assert page.get_by_role("link", name=XSS_ID, exact=True).count() == 1
        assert dialogs == []
        log.assert_clean()
    finally:
        context.close()


def test_times_show_in_utc_without_javascript(browser: Any, server: str) -> None:
    """With JavaScript off the pages still work and show the server's UTC time."""
    context, page, _ = _open(browser, DESKTOP, java_script_enabled=False)
    try:
        page.goto(server + "/matches/m-001")
        assert page.locator("dl.facts time").inner_text() == "Nov 1, 2026 12:00\u202fPM UTC"
        assert page.locator("section.explain").count() == 2
        page.goto(server + "/players/alice")
        assert page.locator("#rating-chart").is_visible()
    finally:
        context.close()


def test_search_box_and_not_found_page(browser: Any, server: str) -> None:
    """Typing an id in the search box opens the player; an unknown one shows the 404 page."""
    context, page, log = _open(browser, DESKTOP)
    try:
        page.goto(server + "/")
        page.fill("#q", "carol")
        page.press("#q", "Enter")
        page.wait_for_url("**/players/carol")
        page.fill("#q", "nobody-here")
        page.press("#q", "Enter")
        page.wait_for_url("**/search?q=nobody-here")
        assert page.locator("#not-found").inner_text() == "No player with the id “nobody-here”."
        screenshot(page, "e2e-not-found-desktop")
        # The only console message allowed is the browser's note that the document itself was a 404.
        assert all("404" in e for e in log.errors), log.errors
    finally:
        context.close()


def test_every_leaderboard_rating_matches_the_api(browser: Any, server: str) -> None:
    """Walking the leaderboard two rows a page in the browser shows exactly the API's ranks and ratings."""
    context, page, log = _open(browser, DESKTOP)
    try:
        page.goto(server + "/?limit=2&all=1")
        shown: list[tuple[int, str, int]] = []
        while True:
            rows = page.locator("#leaderboard tbody tr")
            for i in range(rows.count()):
                row = rows.nth(i)
                shown.append(
                    (
                        int(row.locator("td.rank").inner_text()),
                        row.get_attribute("data-player") or "",
                        int(row.locator("td.rating .value").inner_text()),
                    )
                )
            following = page.locator('a[rel="next"]')
            if following.count() == 0:
                break
            following.click()
            page.wait_for_load_state()
        api = _api(server, "/v1/leaderboard?limit=500")["items"]
        assert shown == [(i["rank"], i["player_id"], i["rating"]) for i in api]
        log.assert_clean()
    finally:
        context.close()
