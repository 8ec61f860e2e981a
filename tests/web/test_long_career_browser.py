"""A long career in headless Chromium: the match list in pages, the chart thinned with its extremes kept.

The player ``marathon`` has 900 matches: a rise of 150 straight wins, a fall of 250 straight losses,
then a mixed run. Expected values come from the service's history read (``player_history``), not
from the page's own read.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sedma_elo.service import ServiceSettings, create_app

from .browser import DESKTOP, PHONE, ConsoleLog, live_server
from .seed import full_history

pytestmark = pytest.mark.browser

MATCHES = 900
PAGE_SIZE = 25  # the page's HISTORY_PAGE_SIZE, stated independently


def _winner(i: int) -> str:
    if 100 <= i < 250:
        return "a"  # the rise
    if 250 <= i < 500:
        return "b"  # the fall
    return "a" if i % 3 else "b"


@pytest.fixture(scope="module")
def career(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A served ledger where ``marathon`` played MATCHES matches; yields URL and history (oldest first)."""
    from sedma_elo.core.model import Match
    from sedma_elo.service import Ledger
    from sedma_elo.storage import open_database

    path: Path = tmp_path_factory.mktemp("career") / "career.db"
    url = f"sqlite:///{path}"
    start = datetime(2025, 1, 1, 12, tzinfo=UTC)
    db = open_database(url)
    try:
        ledger = Ledger(db)
        ledger.ensure_version()
        ledger.import_matches(
            [
                Match.single(
                    "marathon",
                    f"rival-{i % 12}",
                    _winner(i),
                    match_id=f"c-{i:03d}",
                    played_at=start + timedelta(hours=i),
                )
                for i in range(MATCHES)
            ]
        )
        history = full_history(ledger, "marathon")
    finally:
        db.dispose()
    with live_server(create_app(ServiceSettings(database_url=url))) as base:
        yield base, history


def _open(browser: Any, viewport: dict[str, int]) -> tuple[Any, Any, ConsoleLog]:
    context = browser.new_context(viewport=viewport, locale="en-US")
    page = context.new_page()
    log = ConsoleLog()
    log.attach(page)
    return context, page, log


def _shown(page: Any) -> list[str]:
    rows = page.locator("#history tbody tr")
    return [rows.nth(i).get_attribute("data-match") for i in range(rows.count())]


def test_match_list_pages_through_the_whole_career(
    browser: Any, career: tuple[str, list[dict[str, Any]]]
) -> None:
    """Older/Newer/Oldest/Newest links walk the career newest first, 25 a page, every match once."""
    base, history = career
    newest_first = [h["match_id"] for h in reversed(history)]
    pages = -(-MATCHES // PAGE_SIZE)
    context, page, log = _open(browser, DESKTOP)
    try:
        page.goto(base + "/players/marathon")
        assert _shown(page) == newest_first[:PAGE_SIZE]
        assert page.locator(".pager .page-of").inner_text() == f"page 1 of {pages}"
        assert page.locator('.pager a[rel="prev"]').count() == 0
        page.locator('.pager a[rel="next"]').click()
        page.wait_for_url("**/players/marathon?before=*")
        assert _shown(page) == newest_first[PAGE_SIZE : 2 * PAGE_SIZE]
        page.locator('.pager a[rel="last"]').click()
        page.wait_for_url("**/players/marathon?after=0")
        assert _shown(page) == newest_first[(pages - 1) * PAGE_SIZE :]
        assert _shown(page)[-1] == "c-000"
        assert page.locator('.pager a[rel="next"]').count() == 0
        page.locator('.pager a[rel="prev"]').click()
        page.wait_for_url(lambda url: "after=" in url and not url.endswith("after=0"))
        assert page.locator(".pager .page-of").inner_text() == f"page {pages - 1} of {pages}"
        assert _shown(page) == newest_first[(pages - 2) * PAGE_SIZE : (pages - 1) * PAGE_SIZE]
        page.locator('.pager a[rel="first"]').click()
        page.wait_for_url(lambda url: url.endswith("/players/marathon?"))  # the query emptied
        assert _shown(page) == newest_first[:PAGE_SIZE]
        log.assert_clean()
    finally:
        context.close()


def _coords(svg: Any) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    lines = svg.locator("polyline.line")
    for i in range(lines.count()):
        for pair in (lines.nth(i).get_attribute("points") or "").split():
            x, y = pair.split(",")
            out.append((float(x), float(y)))
    return out


def _y_of(svg: Any) -> Any:
    """The rating -> y mapping read off the chart's own axis: its lowest and highest y tick."""
    labels = svg.locator("text.ylabel")
    ticks = [
        (float(labels.nth(i).text_content()), float(labels.nth(i).get_attribute("y")))
        for i in range(labels.count())
    ]
    (low, y_low), (high, y_high) = min(ticks), max(ticks)
    offset = 4.0  # a label sits 4 units below its grid line (chart.html)
    return lambda rating: (
        (y_low - offset) + (rating - low) / (high - low) * ((y_high - offset) - (y_low - offset))
    )


@pytest.mark.parametrize(("viewport", "cls"), [(DESKTOP, "wide"), (PHONE, "narrow")])
def test_chart_is_thinned_and_keeps_the_extremes(
    browser: Any, career: tuple[str, list[dict[str, Any]]], viewport: dict[str, int], cls: str
) -> None:
    """900 matches draw at most about 400 points; the peak and the trough are on the line."""
    base, history = career
    ratings = [history[0]["rating_before"], *(h["rating_after"] for h in history)]
    peak, trough = max(ratings), min(ratings)
    context, page, log = _open(browser, viewport)
    try:
        page.goto(base + "/players/marathon")
        svg = page.locator(f".rating-chart.{cls}")
        assert svg.is_visible()
        coords = _coords(svg)
        # Both polylines share the last provisional point; 400 is chart.MAX_POINTS, stated here.
        assert 100 < len(coords) <= 402 + 1 < MATCHES
        y_of = _y_of(svg)
        top, bottom = min(y for _, y in coords), max(y for _, y in coords)
        assert abs(top - y_of(peak)) < 0.2, (top, y_of(peak), peak)
        assert abs(bottom - y_of(trough)) < 0.2, (bottom, y_of(trough), trough)
        assert svg.get_attribute("aria-label") == f"Rating of marathon from {trough} to {peak}"
        assert svg.locator("a.pt").count() == 0  # too many points for a dot each
        xs = [x for x, _ in coords]
        assert xs == sorted(xs)
        log.assert_clean()
    finally:
        context.close()
