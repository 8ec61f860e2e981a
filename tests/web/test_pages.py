"""The HTML pages through FastAPI's TestClient: status codes, content, paging, escaping."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from sedma_elo import Match, PlayerStats, rate
from sedma_elo.core.explain import explain_result
from sedma_elo.service import MatchIn, submission_from_payload

from .conftest import Site
from .seed import XSS_ID, XSS_MATCH_ID, seed_matches

ROW = re.compile(r'<tr data-player="([^"]*)" data-rating="(-?\d+)"(?: class="provisional")?>')
NEXT = re.compile(r'<a href="([^"]*)" rel="next">')
MINUS = "\u2212"


def older_link(page: str) -> str:
    """The query of a player page's Older link."""
    found = re.search(r'<a href="([^"]*)" rel="next">', page)
    assert found is not None
    return html.unescape(found.group(1))


def board_rows(page: str) -> list[tuple[str, int]]:
    """(player id, rating) of each leaderboard row, ids unescaped."""
    return [(html.unescape(pid), int(r)) for pid, r in ROW.findall(page)]


def test_leaderboard_shows_the_services_order_and_ratings(site: Site) -> None:
    """With provisional players shown, every row equals the service's leaderboard, highest first."""
    page = site.client.get("/?all=1")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    expected = [(i["player_id"], i["rating"]) for i in site.ledger.leaderboard(50, None).items]
    assert board_rows(page.text) == expected
    ratings = [r for _, r in expected]
    assert ratings == sorted(ratings, reverse=True) and len(ratings) == 6


def test_leaderboard_pages_cover_everyone_once(site: Site) -> None:
    """Following the 'next' links with 2 rows a page visits every player exactly once, in order."""
    seen: list[tuple[str, int]] = []
    url: str | None = "/?limit=2&all=1"
    pages = 0
    while url is not None:
        page = site.client.get(url)
        assert page.status_code == 200
        rows = board_rows(page.text)
        assert len(rows) <= 2
        seen.extend(rows)
        found = NEXT.search(page.text)
        url = html.unescape(found.group(1)) if found else None
        assert url is None or "all=1" in url  # the toggle sticks from page to page
        pages += 1
    assert pages == 3
    assert seen == [(i["player_id"], i["rating"]) for i in site.ledger.leaderboard(50, None).items]


def test_leaderboard_limit_is_bounded(site: Site) -> None:
    """A page size outside 1..100 is refused with 422, not served."""
    assert site.client.get("/?limit=0").status_code == 422
    assert site.client.get("/?limit=101").status_code == 422


def test_player_page_shows_rating_matches_and_newest_first(site: Site) -> None:
    """alice's page shows her rating and count and lists her newest match first, 25 to a page."""
    page = site.client.get("/players/alice")
    assert page.status_code == 200
    player = site.ledger.get_player("alice")
    rating = player["rating"] if isinstance(player, dict) else player.rating
    assert f'data-rating="{rating}"' in page.text
    assert '<dd class="num" id="player-matches">31</dd>' in page.text
    matches = re.findall(r'<tr data-match="([^"]*)" data-rating-after="(-?\d+)">', page.text)
    assert len(matches) == 25
    assert matches[0] == ("m-033", str(rating))
    assert re.search(r'href="\?before=\d+" rel="next"', page.text)
    assert '<figure class="chart" id="rating-chart">' in page.text


def test_player_second_page_holds_the_oldest_matches(site: Site) -> None:
    """Page 2 of alice's matches (her page's Older link) ends with her first match, and links back."""
    page = site.client.get("/players/alice" + older_link(site.client.get("/players/alice").text))
    assert page.status_code == 200
    matches = re.findall(r'<tr data-match="([^"]*)"', page.text)
    assert len(matches) == 31 - 25
    assert matches[-1] == "m-001"
    assert re.search(r'href="\?after=\d+" rel="prev"', page.text)
    assert 'rel="next"' not in page.text
    assert "page 2 of 2" in page.text


def test_a_page_past_the_first_match_is_a_404(site: Site) -> None:
    """A list page older than the player's first match answers 404 (the link is not valid)."""
    first = site.ledger.player_history("alice", 1).items[0]["sequence"]
    assert site.client.get(f"/players/alice?before={first}").status_code == 404


def test_before_and_after_together_are_refused(site: Site) -> None:
    """A list link naming both ends is a 400 page, not a guess."""
    assert site.client.get("/players/alice?before=5&after=2").status_code == 400


def test_unknown_player_gets_a_404_page(site: Site) -> None:
    """An unknown player id answers 404 with an HTML page saying so."""
    page = site.client.get("/players/nobody")
    assert page.status_code == 404
    assert "text/html" in page.headers["content-type"]
    assert "No player with the id “nobody”" in page.text


def test_unknown_match_gets_a_404_page(site: Site) -> None:
    """An unknown match id answers 404 with an HTML page."""
    page = site.client.get("/matches/m-999")
    assert page.status_code == 404
    assert "No match with the id “m-999”" in page.text


def test_player_supplied_strings_render_as_text(site: Site) -> None:
    """A player id and a match id with markup are escaped on every page that shows them."""
    urls = [
        "/",
        "/players/" + quote(XSS_ID, safe=""),
        "/matches/" + quote(XSS_MATCH_ID, safe=""),
        "/players/carol",
        "/search?q=" + quote("<script>nobody", safe=""),
    ]
    for url in urls:
        page = site.client.get(url)
        assert page.status_code in (200, 404), url
        assert "<script>alert" not in page.text, url
        assert "<script>nobody" not in page.text, url
        assert "<i>italic" not in page.text, url
    assert "&lt;script&gt;alert(" in site.client.get("/?all=1").text
    assert "m-&lt;i&gt;italic" in site.client.get("/matches/" + quote(XSS_MATCH_ID, safe="")).text


def test_match_page_explains_the_first_match_in_numbers(site: Site) -> None:
    """m-001 worked out by hand: expected 0.5, K 40, the 16er bonus capped, both scores clamped, +20/-20."""
    page = site.client.get("/matches/m-001")
    assert page.status_code == 200
    text = page.text
    assert 'data-player="alice" data-side="a" data-rating-before="1000" data-rating-after="1020"' in text
    assert 'data-player="bob" data-side="b" data-rating-before="1000" data-rating-after="980"' in text
    assert text.count('<td class="num expected">0.500</td>') == 2
    assert "rating 1000 is below 1200" in text
    assert "4 &times; 0.05 = 0.20, <strong>capped at 0.15</strong>" in text
    assert "<strong>clamped down to the maximum</strong>" in text
    assert "<strong>clamped up to the minimum</strong>" in text
    assert "40 &times; (1.000 &minus; 0.500)" in text
    assert "1000 +20.00 = 1020.00, rounded to the nearest integer, halves to even" in text
    assert f"1000 {MINUS}20.00 = 980.00" in text


def test_match_page_shows_the_engines_sentences(site: Site) -> None:
    """The plain-words sentences are sedma_elo.core.explain's for the same match, headline first."""
    first = seed_matches()[0]
    match = Match.single(
        "alice",
        "bob",
        "a",
        PlayerStats(**first["stats"]["a"]),
        PlayerStats(**first["stats"]["b"]),
        match_id="m-001",
    )
    expected = explain_result(rate(match, {"alice": 1000, "bob": 1000}))
    text = html.unescape(site.client.get("/matches/m-001").text)
    for sentences in expected.values():
        assert f'<p class="headline">{sentences[0]}</p>' in text
        for sentence in sentences[1:]:
            assert f"<li>{sentence}</li>" in text
    assert "capped at +0.15" in text  # four 16ers: 4 x 0.05 = 0.20 over the cap, by hand


def test_times_are_utc_in_time_elements(site: Site) -> None:
    """Match times are rendered as UTC text inside <time datetime=...> for the script to localise."""
    text = site.client.get("/matches/m-001").text
    assert '<time datetime="2026-11-01T12:00:00Z">Nov 1, 2026 12:00\u202fPM UTC</time>' in text


def test_search_jumps_to_the_player(site: Site) -> None:
    """The search form redirects to the player's page; blanks around the id are ignored."""
    found = site.client.get("/search", params={"q": "  carol "}, follow_redirects=False)
    assert found.status_code == 303
    assert found.headers["location"] == "/players/carol"
    odd = site.client.get("/search", params={"q": XSS_ID}, follow_redirects=False)
    assert odd.headers["location"] == "/players/" + quote(XSS_ID, safe="")


def test_search_for_an_unknown_player_says_so(site: Site) -> None:
    """An unknown id answers 404 and keeps the query in the search box (escaped)."""
    page = site.client.get("/search", params={"q": "zed"})
    assert page.status_code == 404
    assert 'value="zed"' in page.text
    assert site.client.get("/search", params={"q": " "}, follow_redirects=False).headers["location"] == "/"


def test_stylesheet_is_served_and_nothing_else(site: Site) -> None:
    """The package's CSS is served under /static; other names are 404."""
    css = site.client.get("/static/style.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert "tabular-nums" in css.text
    assert site.client.get("/static/../pages.py").status_code == 404
    assert site.client.get("/static/nothing.js").status_code == 404


def test_pages_carry_a_content_security_policy(site: Site) -> None:
    """Every page forbids scripts other than the one hashed inline script."""
    for url in ("/", "/players/alice", "/matches/m-001", "/players/nobody"):
        policy = site.client.get(url).headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'sha256-" in policy


def test_every_seeded_match_has_a_page(site: Site) -> None:
    """Each match of the seed history renders, whoever won."""
    for m in seed_matches():
        assert site.client.get("/matches/" + quote(m["match_id"], safe="")).status_code == 200


def test_a_bad_cursor_gets_a_400_page(site: Site) -> None:
    """A damaged page link is refused with an HTML 400 page naming the problem."""
    page = site.client.get("/", params={"cursor": "not-a-cursor"})
    assert page.status_code == 400
    assert "text/html" in page.headers["content-type"]
    assert "cursor" in page.text


def test_team_draw_shows_both_teams(site: Site) -> None:
    """A two-against-two draw posted to the API gets a page with four explained players."""
    body = {
        "match_id": "t-1",
        "played_at": "2026-11-29T12:00:00Z",
        "team_a": ["alice", "bob"],
        "team_b": ["carol", "dave"],
        "winner": "draw",
    }
    [outcome] = site.ledger.apply([submission_from_payload(MatchIn.model_validate(body))])
    assert outcome.status == "created"
    page = site.client.get("/matches/t-1")
    assert page.status_code == 200
    assert page.text.count('<section class="explain"') == 4
    assert '<dd id="match-result">draw</dd>' in page.text
    carol = site.client.get("/players/carol").text
    assert 'data-match="t-1"' in carol
    assert (
        '<a href="/players/alice" title="alice">alice</a> &amp; <a href="/players/bob" title="bob">bob</a>'
        in carol
    )


def test_voided_match_says_so(site: Site) -> None:
    """After an admin voids a match its page says it changed nobody's rating."""
    site.ledger.void("m-003", "replayed by mistake")
    page = site.client.get("/matches/m-003")
    assert page.status_code == 200
    assert 'id="voided"' in page.text
    assert "replayed by mistake" in page.text
    assert '<section class="explain"' not in page.text


def test_search_lists_players_starting_with_the_query(site: Site) -> None:
    """An id that is no player but starts some lists those players (by id), each linked to its page."""
    page = site.client.get("/search", params={"q": "  a "})
    assert page.status_code == 200
    listed = [html.unescape(p) for p in re.findall(r'<tr data-player="([^"]*)">', page.text)]
    everyone = [i["player_id"] for i in site.ledger.leaderboard(100, None).items]
    assert listed == sorted(p for p in everyone if p.startswith("a"))
    assert listed and all(f'href="/players/{quote(p, safe="")}"' in page.text for p in listed)
