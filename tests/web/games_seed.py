"""A database holding one analysed game (the shipped example, alice against bob) for the page tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sedma_elo.service.games import GameIn, GameStore, check_game
from sedma_elo.service.games.worker import GameWorker
from sedma_elo.service.ledger import Ledger
from sedma_elo.storage import open_database

EXAMPLE = Path(__file__).parents[2] / "src" / "sedma_elo" / "game" / "examples" / "example_match.json"
GAME_ID = "example-1"


def analysed_game_db(path: Path) -> tuple[str, dict[str, Any]]:
    """A new SQLite database where the example game is posted, analysed and applied: its URL, the analysis."""
    url = f"sqlite:///{path}"
    db = open_database(url)
    try:
        ledger = Ledger(db, async_connections=1)
        ledger.ensure_version()
        body = {
            "match_id": GAME_ID,
            "played_at": "2026-11-29T12:00:00Z",
            "record": json.loads(EXAMPLE.read_text()),
        }
        store = GameStore(db)
        store.submit(check_game(GameIn.model_validate(body)))
        assert GameWorker(ledger).drain() == 1
        analysis = store.get(GAME_ID).analysis
        assert analysis is not None
    finally:
        db.dispose()
    return url, analysis
