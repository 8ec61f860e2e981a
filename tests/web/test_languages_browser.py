"""Every page in every language, on a desktop (1280 px) and a phone (390 px), in headless Chromium.

Each page must say its language in ``<html lang>``, log no console error, show no English message
of the catalogs (when the page is not English), and not scroll sideways. Full-page screenshots are
kept in ``browser.ARTIFACTS`` (outside the repository) to be looked at.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import pytest
from babel.messages.pofile import read_po

from sedma_elo.i18n import LANGUAGES, catalog_text
from sedma_elo.service import ServiceSettings, create_app

from .browser import DESKTOP, PHONE, ConsoleLog, live_server, screenshot
from .seed import XSS_ID

pytestmark = pytest.mark.browser

PAGES = {
    "leaderboard": "/",
    "leaderboard-all": "/?all=1",
    "player": "/players/alice",
    "player-1m": "/players/alice?range=1m",
    "provisional-player": "/players/" + quote(XSS_ID, safe=""),
    "match": "/matches/m-001",
    "not-found": "/players/nobody",
}
FIELD = re.compile(r"\{\w+\}")
#: What a page shows besides text: tooltips, placeholders and labels are read too.
VISIBLE_TEXT = """() => {
  const parts = [document.body.innerText, document.title];
  for (const el of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
    for (const name of ['title', 'placeholder', 'aria-label']) {
      if (el.hasAttribute(name)) parts.push(el.getAttribute(name));
    }
  }
  for (const t of document.querySelectorAll('svg title')) parts.push(t.textContent);
  return parts.join('\\n');
}"""


def english_fragments(lang: str) -> list[str]:
    """The English text of every catalog message that ``lang`` words differently: the runs between
    its ``{fields}`` that have at least two words (single words such as "Bonus" are shared)."""
    catalog = read_po(io.StringIO(catalog_text(lang)))
    found: set[str] = set()
    for entry in catalog:
        if not entry.id:
            continue
        ids = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        for english in ids:
            if english in forms:
                continue
            for part in FIELD.split(english):
                part = part.strip(" .:;,()–")
                if len(part.split()) >= 2 and len(part) >= 8:
                    found.add(part)
    return sorted(found)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The seeded app served on 127.0.0.1 for the whole module (the pages are only read)."""
    from sedma_elo.service import Ledger, MatchIn, submission_from_payload
    from sedma_elo.storage import open_database

    from .seed import seed_matches

    url = f"sqlite:///{tmp_path_factory.mktemp('lang') / 'site.db'}"
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    ledger.apply([submission_from_payload(MatchIn.model_validate(m)) for m in seed_matches()])
    db.dispose()
    with live_server(create_app(ServiceSettings(database_url=url))) as base:
        yield base


@contextmanager
def opened(browser: Any, **options: Any) -> Iterator[Any]:
    """A new page in a fresh browser context with ``options``; the context is closed after."""
    context = browser.new_context(**options)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.mark.parametrize("device", ["desktop", "phone"])
@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_page_in_every_language(browser: Any, server: str, lang: str, device: str) -> None:
    """Each page: right <html lang>, clean console, no English left, no sideways scrolling."""
    options: dict[str, Any] = {"viewport": DESKTOP if device == "desktop" else PHONE}
    if device == "phone":
        options.update(is_mobile=True, has_touch=True)
    context = browser.new_context(locale="en-US", **options)
    fragments = english_fragments(lang) if lang != "en" else []
    try:
        for name, path in PAGES.items():
            page = context.new_page()
            log = ConsoleLog()
            log.attach(page)
            sep = "&" if "?" in path else "?"
            answer = page.goto(f"{server}{path}{sep}lang={lang}")
            assert answer is not None
            expected_lang = "zh-Hans" if lang == "zh" else lang
            assert page.locator("html").get_attribute("lang") == expected_lang
            text = page.evaluate(VISIBLE_TEXT)
            left = [f for f in fragments if f in text]
            assert not left, f"{lang} {name}: untranslated {left}"
            width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"{lang} {name} is {width[0]} px wide on a {width[1]} px screen"
            screenshot(page, f"lang-{lang}-{device}-{name}")
            if name == "not-found":
                assert answer.status == 404
                assert all("404" in e for e in log.errors), log.errors
            else:
                log.assert_clean()
            page.close()
    finally:
        context.close()


def test_the_language_switch_is_remembered(browser: Any, server: str) -> None:
    """Choosing Deutsch on one page keeps later pages (without ?lang) in German, over Accept-Language."""
    with opened(browser, viewport=DESKTOP, locale="it-IT") as page:
        page.goto(server + "/")
        assert page.locator("html").get_attribute("lang") == "it"  # from Accept-Language
        page.locator('nav.langs a[hreflang="de"]').click()
        page.wait_for_url("**lang=de")
        assert page.locator("h1").inner_text() == "Rangliste"
        page.goto(server + "/players/alice")
        assert page.locator("html").get_attribute("lang") == "de"
        assert page.locator('nav.langs a[aria-current="true"]').inner_text() == "Deutsch"


def test_chart_points_are_reached_by_keyboard(browser: Any, server: str) -> None:
    """Tabbing through the player page reaches a chart point; Enter opens its match."""
    with opened(browser, viewport=DESKTOP, locale="en-US") as page:
        page.goto(server + "/players/alice")
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.matches('.rating-chart.wide a.pt')"):
                break
        else:
            pytest.fail("no chart point was reached by Tab")
        page.keyboard.press("Enter")
        page.wait_for_url("**/matches/**")
        assert page.locator("section.explain").count() == 2


def test_range_buttons_work_on_a_phone(browser: Any, server: str) -> None:
    """Tapping "1 month" on a phone narrows the chart to the last month; "All" brings the career back."""
    with opened(browser, viewport=PHONE, is_mobile=True, has_touch=True, locale="en-US") as page:
        page.goto(server + "/players/alice")
        chart = page.locator(".rating-chart.narrow")
        assert chart.is_visible()
        everything = chart.locator("a.pt").count()
        page.locator('nav.ranges a[data-range="1m"]').tap()
        page.wait_for_url("**range=1m")
        assert page.locator('nav.ranges a[aria-current="true"]').get_attribute("data-range") == "1m"
        month = page.locator(".rating-chart.narrow a.pt").count()
        assert 0 < month <= everything
        box = page.locator('nav.ranges a[data-range="all"]').bounding_box()
        assert box is not None and box["height"] >= 36  # big enough to tap
        labels = page.locator(".rating-chart.narrow text.xlabel")
        assert labels.count() >= 2
        size = page.evaluate(
            "() => { const t = document.querySelector('.rating-chart.narrow text.xlabel');"
            " return t.getBoundingClientRect().height; }"
        )
        assert size >= 10  # readable axis text: not shrunk to a few pixels
