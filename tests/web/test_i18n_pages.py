"""Languages, provisional players and the richer player and match pages, through the TestClient."""

from __future__ import annotations

import html
import re

from sedma_elo.service import MatchIn, submission_from_payload

from .conftest import Site

ROW = re.compile(r'<tr data-player="([^"]*)" data-rating="-?\d+"( class="provisional")?>')


def test_lang_query_sets_the_page_language_and_a_cookie(site: Site) -> None:
    """?lang=de gives a German page (html lang, Content-Language) and remembers the choice."""
    page = site.client.get("/?lang=de")
    assert '<html lang="de">' in page.text
    assert page.headers["content-language"] == "de"
    assert "<h1>Rangliste</h1>" in page.text
    assert site.client.cookies.get("lang") == "de"
    again = site.client.get("/players/alice")  # no ?lang: the cookie decides
    assert '<html lang="de">' in again.text and "Wertung im Zeitverlauf" in again.text


def test_accept_language_picks_the_language(site: Site) -> None:
    """Without ?lang or a cookie the Accept-Language header chooses (Chinese says zh-Hans)."""
    page = site.client.get("/", headers={"Accept-Language": "fr;q=0.9, zh-CN;q=0.8"})
    assert '<html lang="zh-Hans">' in page.text and "排行榜" in page.text
    english = site.client.get("/", headers={"Accept-Language": "ja"})
    assert '<html lang="en">' in english.text


def test_every_page_has_the_language_switch(site: Site) -> None:
    """Each page links to itself in all six languages, keeping its other parameters."""
    page = site.client.get("/players/alice?range=1y&lang=sk").text
    for code in ("en", "de", "it", "es", "sk", "zh"):
        assert f'href="?range=1y&amp;lang={code}" hreflang="{code}"' in page
    assert 'hreflang="sk" lang="sk" aria-current="true">Slovenčina</a>' in page


def test_error_pages_are_translated(site: Site) -> None:
    """The 404 page speaks the reader's language."""
    page = site.client.get("/players/nobody?lang=es")
    assert page.status_code == 404
    assert "Ningún jugador con el id «nobody»." in page.text
    assert "Volver a la clasificación" in page.text


def test_api_explanations_follow_lang(site: Site) -> None:
    """GET /v1/matches/{id}?lang=it explains in Italian; without it, English as stored."""
    english = site.client.get("/v1/matches/m-001").json()
    italian = site.client.get("/v1/matches/m-001?lang=it").json()
    by_header = site.client.get("/v1/matches/m-001", headers={"Accept-Language": "it-IT"}).json()
    assert italian == by_header
    alice_en = next(c for c in english["changes"] if c["player_id"] == "alice")
    alice_it = next(c for c in italian["changes"] if c["player_id"] == "alice")
    assert alice_en["explanation"][0].startswith("alice won against bob, an equally rated player")
    assert alice_it["explanation"][0].startswith(
        "alice ha vinto contro bob – un giocatore con la stessa valutazione"
    )
    assert "4 round vinti con 16 punti" in alice_it["explanation"][2]
    assert {k: v for k, v in alice_it.items() if k != "explanation"} == {
        k: v for k, v in alice_en.items() if k != "explanation"
    }


def test_api_player_says_provisional(site: Site) -> None:
    """bob (7 matches) is provisional in the JSON API; alice (31) is not."""
    assert site.client.get("/v1/players/bob").json()["provisional"] is True
    assert site.client.get("/v1/players/alice").json()["provisional"] is False


def test_leaderboard_leaves_provisional_players_off_until_asked(site: Site) -> None:
    """By default only players with 10+ matches are ranked; the toggle lists everyone, marked "?"."""
    default = site.client.get("/").text
    assert [pid for pid, _ in ROW.findall(default)] == ["alice"]
    assert 'id="provisional-toggle" href="?all=1"' in default
    everyone = site.client.get("/?all=1").text
    rows = ROW.findall(everyone)
    assert len(rows) == 6
    assert {html.unescape(pid) for pid, mark in rows if mark} == {
        "bob",
        "carol",
        "dave",
        "erin",
        "<script>alert('pwned')",
    }
    assert everyone.count('<abbr class="prov" title="provisional rating">?</abbr>') == 5


def test_player_page_record_peak_streak_and_head_to_head(site: Site) -> None:
    """alice, by hand from the seed: 21 wins, 0 draws, 10 losses; peak 1103 on Nov 17; 2 wins running;
    7 matches against bob (m-001 won, then the seed's i = 0, 5, 10, 15, 20, 25: losses at i = 0 and 15)."""
    page = site.client.get("/players/alice").text
    assert '<dd class="num" id="player-record">21 – 0 – 10</dd>' in page
    assert '<dd class="num" id="player-peak">1103 <small>Nov 17, 2026</small></dd>' in page
    assert '<dd id="player-streak">2 wins</dd>' in page
    bob = re.search(r'<tr data-opponent="bob">(.*?)</tr>', page, re.S)
    assert bob is not None
    assert re.findall(r'<td class="num[^"]*">(\d+)</td>', bob.group(1)) == ["7", "5", "0", "2"]


def test_match_list_shows_opponents_rating_and_result(site: Site) -> None:
    """Each listed match has the opponent's rating before it and the result in words."""
    first_seq = site.ledger.player_history("alice", 1).items[0]["sequence"]
    page = site.client.get(f"/players/alice?before={first_seq + 1}").text
    first = re.search(r'<tr data-match="m-001".*?</tr>', page, re.S)
    assert first is not None
    assert '<td class="num opt">1000</td>' in first.group(0)  # bob's rating before m-001
    assert '<td class="result win">won</td>' in first.group(0)


def test_winner_card_comes_first(site: Site) -> None:
    """In m-003 side b (dave) won: dave's explanation is shown before carol's."""
    page = site.client.get("/matches/m-003").text
    assert page.index('data-player="dave"') < page.index('data-player="carol"')
    assert '<dd id="match-result">dave won</dd>' in page
    assert "Applied as" not in page


def test_what_the_clamp_and_the_malus_took(site: Site) -> None:
    """m-001 by hand: without the clamp alice would gain 40 x (1.15 - 0.5) = +26 and bob lose
    40 x (-0.06 - 0.5) = -22.4, so -22; without his malus bob would still lose 20."""
    page = site.client.get("/matches/m-001").text
    assert '<li class="without-clamp">Without the clamp this would have been +26.</li>' in page
    assert '<li class="without-clamp">Without the clamp this would have been \u221222.</li>' in page
    assert '<li class="without-malus">Without the malus this would have been \u221220.</li>' in page


def test_a_date_only_match_shows_no_invented_time(site: Site) -> None:
    """A match stored at 00:00 UTC (a date without a time) is shown as its date alone."""
    body = {
        "match_id": "d-1",
        "played_at": "2026-11-20T00:00:00Z",
        "player_a": "erin",
        "player_b": "bob",
        "winner": "a",
    }
    [outcome] = site.ledger.apply([submission_from_payload(MatchIn.model_validate(body))])
    assert outcome.status == "created"
    page = site.client.get("/matches/d-1").text
    assert '<time datetime="2026-11-20" data-date-only>Nov 20, 2026</time>' in page
    assert "12:00" not in page and "AM" not in page


def test_a_provisional_player_has_no_rank(site: Site) -> None:
    """bob (7 matches) is not ranked on the default leaderboard, so his page shows no rank, but "?"."""
    page = site.client.get("/players/bob").text
    assert 'id="player-rank"' not in page
    assert 'id="provisional-notice"' in page
    assert '<abbr class="prov" title="provisional rating">?</abbr>' in page
    assert 'id="player-rank"' in site.client.get("/players/alice").text
