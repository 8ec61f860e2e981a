"""Player search and leaderboard ties in a PostgreSQL database with a Czech collation."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sedma_elo import Match
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database

pytestmark = pytest.mark.postgres


@pytest.fixture
def czech_ledger(new_pg_database: Callable[[str], str]) -> Iterator[Ledger]:
    """A ledger on a fresh database whose default collation is ICU cs-CZ ("ch" after "h")."""
    url = new_pg_database("TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'cs-CZ' LOCALE 'C.UTF-8'")
    ledger = Ledger(open_database(url))
    ledger.ensure_version()
    yield ledger
    ledger.db.dispose()


def test_prefix_search_finds_ids_a_language_collation_sorts_elsewhere(czech_ledger: Ledger) -> None:
    """Searching "c" finds "chalupa" even where Czech sorts "ch" after "h"."""
    pairs = [("cesta", "hrad"), ("chalupa", "cibule"), ("ch", "dub")]
    czech_ledger.import_matches(Match.single(a, b, "a", match_id=f"m-{a}") for a, b in pairs)
    found = [p["player_id"] for p in czech_ledger.search_players("c", 20)]
    assert found == ["cesta", "ch", "chalupa", "cibule"]  # code point order, as on SQLite


def test_leaderboard_ties_are_in_code_point_order(czech_ledger: Ledger) -> None:
    """Equal ratings are ordered by id code point by code point, the same as on SQLite."""
    pairs = [("hrad", "x1"), ("chalupa", "x2"), ("cesta", "x3")]
    czech_ledger.import_matches(Match.single(a, b, "a", match_id=f"m-{a}") for a, b in pairs)
    top = [item["player_id"] for item in czech_ledger.leaderboard(3).items]
    assert top == ["cesta", "chalupa", "hrad"]
