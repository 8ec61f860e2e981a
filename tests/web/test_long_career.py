"""A long career on the player page: the chart thinned to a bound with its extremes, the list in pages.

``marathon`` plays 1,300 matches (one against one and two against two, wins, losses and draws,
a rise and a fall), on SQLite and PostgreSQL. Expected values come from the service's history read
(``player_history``) and the whole-career reference :func:`sedma_elo.web.profile.career`, not from
the bounded reads under test.
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from career_check import assert_summary_is_whole_careers
from needs import PG_ADMIN, require_postgres
from sedma_elo.core.model import Match
from sedma_elo.service import Ledger, ServiceSettings, create_app
from sedma_elo.service.ledger.career import keep_extremes
from sedma_elo.storage import open_database

from .seed import full_history

MATCHES = 1300
BOUND = 400  # the chart's MAX_POINTS, stated independently
PAGE_SIZE = 25  # the page's HISTORY_PAGE_SIZE, stated independently
START = datetime(2025, 1, 1, 12, tzinfo=UTC)


def _match(i: int) -> Match:
    winner = "a" if 200 <= i < 350 else "b" if 350 <= i < 600 else ("a", "b", "draw")[i % 3]
    when = START + timedelta(hours=7 * i)
    if i % 5 == 0:  # two against two: the best win's opponent rating is a mean
        team_a, team_b = ("marathon", f"mate-{i % 3}"), (f"rival-{i % 11}", f"rival-{(i + 1) % 11}")
        return Match(team_a, team_b, winner, {}, f"c-{i:04d}", when)  # type: ignore[arg-type]
    return Match.single("marathon", f"rival-{i % 11}", winner, match_id=f"c-{i:04d}", played_at=when)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def long_site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """(TestClient, Ledger, history oldest first) over a ledger where ``marathon`` played MATCHES."""
    name = None
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('long') / 'long.db'}"
    else:
        require_postgres()
        name = f"sedma_elo_test_{secrets.token_hex(4)}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    ledger.import_matches([_match(i) for i in range(MATCHES)])
    history = full_history(ledger, "marathon")
    try:
        with TestClient(create_app(ServiceSettings(database_url=url, rate_limit=0))) as client:
            yield client, ledger, history
    finally:
        db.dispose()
        if name is not None:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_long_series_is_thinned_to_the_bound(long_site: Any) -> None:
    """1,300 matches come back as at most the bound of points, oldest first, numbered by match."""
    _, ledger, history = long_site
    series = ledger.career_series("marathon", BOUND - 1)
    assert len(history) == MATCHES
    assert len(series) <= BOUND - 1
    assert [p.number for p in series] == sorted({p.number for p in series})
    by_number = {i: h for i, h in enumerate(history, start=1)}
    assert all(
        (p.sequence, p.rating_after, p.match_id)
        == (
            by_number[p.number]["sequence"],
            by_number[p.number]["rating_after"],
            by_number[p.number]["match_id"],
        )
        for p in series
    )


def test_the_thinned_series_keeps_first_last_lowest_and_highest(long_site: Any) -> None:
    """The first and last match and the career's lowest and highest rating survive the thinning."""
    _, ledger, history = long_site
    series = ledger.career_series("marathon", BOUND - 1)
    ratings = [h["rating_after"] for h in history]
    kept = {p.number for p in series}
    assert {1, MATCHES} <= kept
    assert ratings.index(max(ratings)) + 1 in kept
    assert ratings.index(min(ratings)) + 1 in kept


def test_the_pages_chart_has_at_most_the_bound_of_points(long_site: Any) -> None:
    """The page's drawn line (both parts, wide chart) has at most the bound of points."""
    client, _, _ = long_site
    page = client.get("/players/marathon").text
    wide = page.split('class="rating-chart narrow"')[0]
    lines = re.findall(r'<polyline class="line[^"]*" points="([^"]*)"', wide)
    assert lines and sum(len(line.split()) for line in lines) <= BOUND + 1  # the parts share a point


def test_a_range_starts_at_the_first_match_within_its_days(long_site: Any) -> None:
    """The one-month series begins with the first match at most 31 days before the last one."""
    _, ledger, history = long_site
    last = datetime.fromisoformat(history[-1]["played_at"].replace("Z", "+00:00"))
    inside = [
        i
        for i, h in enumerate(history, 1)
        if datetime.fromisoformat(h["played_at"].replace("Z", "+00:00")) >= last - timedelta(days=31)
    ]
    series = ledger.career_series("marathon", BOUND - 1, 31)
    assert [p.number for p in series] == inside  # fewer than the bound: every one kept


def test_the_list_pages_through_every_match_once(long_site: Any) -> None:
    """Older links from the newest page list every match once, newest first, 25 a page."""
    client, _, history = long_site
    newest_first = [h["match_id"] for h in reversed(history)]
    seen: list[str] = []
    url: str | None = "/players/marathon"
    pages = 0
    while url is not None:
        page = client.get(url).text
        shown = re.findall(r'<tr data-match="([^"]*)"', page)
        assert 0 < len(shown) <= PAGE_SIZE
        seen.extend(shown)
        pages += 1
        found = re.search(r'<a href="([^"]*)" rel="next">', page)
        url = None if found is None else "/players/marathon" + html.unescape(found.group(1))
    assert seen == newest_first
    assert pages == -(-MATCHES // PAGE_SIZE)


def test_newer_links_walk_back_from_the_oldest_page(long_site: Any) -> None:
    """From the Oldest link, Newer links list every match once, on the same page boundaries."""
    client, _, history = long_site
    newest_first = [h["match_id"] for h in reversed(history)]
    pages: list[list[str]] = []
    url: str | None = "/players/marathon?after=0"
    while url is not None:
        page = client.get(url).text
        pages.append(re.findall(r'<tr data-match="([^"]*)"', page))
        found = re.search(r'<a href="([^"]*)" rel="prev">', page)
        url = None if found is None else "/players/marathon" + html.unescape(found.group(1))
    expected = [newest_first[i : i + PAGE_SIZE] for i in range(0, MATCHES, PAGE_SIZE)]
    assert pages == expected[::-1]


def test_the_summary_matches_the_whole_career_reference(long_site: Any) -> None:
    """Record, streaks, peak, best win and head-to-head equal those of the whole career read."""
    _, ledger, _ = long_site
    for player in ("marathon", "rival-3", "mate-1"):
        assert_summary_is_whole_careers(ledger, player)


def test_keep_extremes_bounds_and_keeps_the_extremes() -> None:
    """A zigzag of 10,000 values thins to the limit, keeping the ends and the global extremes."""
    values = [(i * 7919) % 1000 - (i == 4321) * 5000 + (i == 777) * 9000 for i in range(10_000)]
    kept = keep_extremes(values, 500)
    assert len(kept) <= 500 and kept == sorted(set(kept))
    assert {0, 9_999, 4321, 777} <= set(kept)


def test_keep_extremes_keeps_a_short_series_whole() -> None:
    """At or under the limit every index is kept."""
    assert keep_extremes([5, 1, 9], 400) == [0, 1, 2]
