"""The match page of an analysed game: rounds, tricks, the bad moves and the malus line's links to them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sedma_elo.i18n import translations
from sedma_elo.service import ServiceSettings, create_app
from sedma_elo.web.game import cost_text
from sedma_elo.web.lang import PageText

from .games_seed import GAME_ID, analysed_game_db


@pytest.fixture(scope="module")
def game_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, Any]]]:
    """The app over a database with the analysed example game; and that analysis."""
    url, analysis = analysed_game_db(tmp_path_factory.mktemp("game") / "site.db")
    with TestClient(create_app(ServiceSettings(database_url=url))) as client:
        yield client, analysis


def _page(client: TestClient, lang: str = "en") -> str:
    answer = client.get(f"/matches/{GAME_ID}?lang={lang}")
    assert answer.status_code == 200
    return answer.text


def test_each_round_shows_its_tricks_points_and_kind(game_site: tuple[TestClient, dict[str, Any]]) -> None:
    """Three rounds; round 1 is alice's 24er at 8:0 with 14 tricks, all taken by alice."""
    client, analysis = game_site
    html = _page(client)
    rounds = re.findall(r'<section class="round" id="round-(\d+)">(.*?)</section>', html, re.S)
    assert [n for n, _ in rounds] == ["1", "2", "3"] == [str(r["round"]) for r in analysis["rounds"]]
    first = rounds[0][1]
    assert "alice won" in first and "(24er)" in first and "points 8:0" in first
    assert re.findall(r'<td class="taker">(\w+)</td>', first) == ["alice"] * sum(
        analysis["rounds"][0]["tricks"]
    )


def test_every_bad_move_is_marked_with_played_better_and_cost(
    game_site: tuple[TestClient, dict[str, Any]],
) -> None:
    """Each bad move of the analysis has its entry (anchor, played, better, cost) and a marked play."""
    client, analysis = game_site
    html = _page(client)
    assert analysis["bad_moves"]
    for b in analysis["bad_moves"]:
        anchor = f"bad-r{b['round']}-m{b['move']}"
        entry = re.search(rf'<li class="bad-move" id="{anchor}">(.*?)</li>', html, re.S)
        assert entry is not None, anchor
        assert f"{b['player']} played" in entry.group(1) and b["cost"] in entry.group(1)
        assert f'<a href="#{anchor}"' in html  # the play in the trick links to it
    assert "turned a won round into a lost one at 4:1" in html  # alice's 7c where stopping won


def test_the_malus_line_links_to_the_players_bad_moves(game_site: tuple[TestClient, dict[str, Any]]) -> None:
    """In each player's explanation the malus row links to exactly that player's bad moves."""
    client, analysis = game_site
    html = _page(client)
    for section in re.findall(r'<section class="explain".*?</section>', html, re.S):
        player = re.search(r'data-player="([^"]+)"', section).group(1)  # type: ignore[union-attr]
        malus = re.search(r'<tr class="malus.*?</tr>', section, re.S).group(0)  # type: ignore[union-attr]
        links = re.findall(r'href="#(bad-r\d+-m\d+)"', malus)
        mine = [f"bad-r{b['round']}-m{b['move']}" for b in analysis["bad_moves"] if b["player"] == player]
        assert links == mine


def test_the_game_reads_in_german(game_site: tuple[TestClient, dict[str, Any]]) -> None:
    """?lang=de: the headings and the cost of a bad move are German, not English."""
    client, _ = game_site
    html = _page(client, "de")
    assert "Die Partie" in html and "Runde 1" in html and "Genommen von" in html
    assert "machte aus einer gewonnenen Runde eine verlorene beim Stand 4:1" in html
    assert "turned a won round" not in html


def test_a_match_without_a_game_shows_no_game(site: Any) -> None:
    """A match posted with its statistics has no game section."""
    html = site.client.get("/matches/m-001").text
    assert 'id="game"' not in html


def _german() -> PageText:
    from starlette.datastructures import URL

    from sedma_elo.i18n import babel_locale

    return PageText("de", translations("de"), babel_locale("de"), URL("/"))


def test_costs_are_translated_in_every_form_the_analysis_words() -> None:
    """Exact costs with outcomes, and sampled costs, come out in German from their cost detail."""
    de = _german()
    conceded = {"kind": "conceded_16", "score": "3:2", "got": "lost_16", "best": "lost"}
    assert cost_text({"cost": "(English)", "cost_detail": conceded}, de) == (
        "gab dem Gegner eine Runde mit 16 Punkten beim Stand 3:2 "
        "(verloren (mit 16 Punkten gegen sich) statt verloren)"
    )
    every = {"kind": "lost_value", "score": "4:1", "share": 77, "deals": 30, "all_deals": True, "value": 1.53}
    assert cost_text({"cost": "(English)", "cost_detail": every}, de) == (
        "verlor Wert in 77 % aller 30 Verteilungen der ungesehenen Karten beim Stand 4:1: "
        "im Mittel 1,53 Matchpunkte"
    )


def test_a_cost_without_a_known_detail_is_shown_as_given() -> None:
    """An older analysis (no cost detail) or an unknown code shows the English cost unchanged."""
    assert cost_text({"cost": "something new at 2:2"}, _german()) == "something new at 2:2"
    unknown = {"cost": "odd at 1:1", "cost_detail": {"kind": "odd", "score": "1:1"}}
    assert cost_text(unknown, _german()) == "odd at 1:1"
