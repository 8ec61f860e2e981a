"""``Ledger.player_history_async`` (the history route's read): the pages of the sync read, one
statement a page; an unknown player is not found, a cursor past the end gives an empty page."""

from __future__ import annotations

import asyncio
import tempfile

import pytest
from ledgers import empty_ledger

from sedma_elo.core.model import Match
from sedma_elo.errors import NotFoundError
from sedma_elo.service import Ledger
from sedma_elo.service.ledger.types import HistoryOrder, HistoryPage


def _read(ledger: Ledger, *args: object) -> HistoryPage:
    """One async history read on a loop of its own, the reader's connections closed on that loop."""

    async def run() -> HistoryPage:
        try:
            return await ledger.player_history_async(*args)  # type: ignore[arg-type]
        finally:
            await ledger.reader.close()

    return asyncio.run(run())


MATCHES = [Match.single("ann", f"o{i % 4}", "ab"[i % 2], match_id=f"m{i}") for i in range(23)]


def _pages(ledger: Ledger, order: HistoryOrder, limit: int, use_async: bool) -> list[list[int]]:
    """Every page's sequences, following the cursors."""
    pages: list[list[int]] = []
    cursor = None
    while True:
        if use_async:
            page = _read(ledger, "ann", limit, cursor, order)
        else:
            page = ledger.player_history("ann", limit, cursor, order)
        pages.append([item["sequence"] for item in page.items])
        assert page.items == ledger.player_history("ann", limit, cursor, order).items
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_async_pages_are_the_sync_pages(db_url: str, order: HistoryOrder) -> None:
    """Pages of 5 in either order: the same items and boundaries as the sync read, every match once."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(MATCHES)
        got = _pages(ledger, order, 5, True)
        assert got == _pages(ledger, order, 5, False)
        assert sorted(s for page in got for s in page) == list(range(1, 24))


def test_async_history_of_an_unknown_player_is_not_found(db_url: str) -> None:
    """No rated match: NotFoundError, as the sync read."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(MATCHES)
        with pytest.raises(NotFoundError):
            _read(ledger, "nobody")


def test_a_cursor_past_the_end_gives_an_empty_page(db_url: str) -> None:
    """The cursor of the last full page, when nothing follows it: an empty page, no cursor."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(MATCHES[:10])
        first = ledger.player_history("ann", 10, None, "asc")
        assert first.next_cursor is None  # exactly one full page: no cursor is handed out
        cursor = ledger.player_history("ann", 9, None, "asc").next_cursor
        assert cursor is not None
        ledger.void("m9", "test")  # the last match goes: the cursor now points past the end
        page = _read(ledger, "ann", 9, cursor, "asc")
        assert (page.items, page.next_cursor) == ([], None)
