"""Player search and leaderboard ties in a PostgreSQL database with a Czech collation."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest

from sedma_elo import Match
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database

pytestmark = pytest.mark.postgres
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture
def czech_ledger() -> Iterator[Ledger]:
    """A ledger on a fresh database whose default collation is ICU cs-CZ ("ch" after "h")."""
    name = f"sedma_elo_cs_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(
            f"CREATE DATABASE \"{name}\" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'cs-CZ'"
            " LOCALE 'C.UTF-8'"
        )
    ledger = Ledger(open_database(f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"))
    ledger.ensure_version()
    try:
        yield ledger
    finally:
        ledger.db.dispose()
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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
