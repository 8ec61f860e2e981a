"""``Ledger.import_matches`` of many matches leaves PostgreSQL statistics the writer's plans can use."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from sedma_elo import Match
from sedma_elo.service import Ledger
from sedma_elo.service.ledger.sql import PG_LOCK_PLAYERS
from sedma_elo.service.ledger.writes import ANALYZE_AFTER
from sedma_elo.storage import libpq_url, open_database

pytestmark = pytest.mark.postgres


def test_the_writer_locks_players_through_their_key_after_an_import(
    new_pg_database: Callable[[], str],
) -> None:
    """After an import of 10,000 players, the players' lock reads the primary key, not a whole version."""
    url = new_pg_database()
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    players = 10_000  # 5,000 matches; of a few hundred players a scan of the table is as good
    assert players // 2 >= ANALYZE_AFTER
    ledger.import_matches(
        [Match.single(f"p{i:06d}", f"p{i + 1:06d}", "a", match_id=f"m-{i}") for i in range(0, players, 2)],
        batch=500,
    )
    db.dispose()
    some = [f"p{i:06d}" for i in range(100, 132, 2)]
    with psycopg.connect(libpq_url(url)) as conn:
        plan = "\n".join(
            r[0] for r in conn.execute("EXPLAIN " + PG_LOCK_PLAYERS.replace("%b", "%s"), (some,))
        )
    assert "player_ratings_pkey" in plan
