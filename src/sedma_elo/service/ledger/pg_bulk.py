"""PostgreSQL after a bulk load: ``ANALYZE`` of the tables an import filled.

(How the import fills a version's ``rating_changes`` without its indexes, then builds them once:
:mod:`.bulk_import` with :mod:`~sedma_elo.storage.partitions`.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from psycopg import sql

__all__ = ["IMPORTED_TABLES", "analyze"]

#: The tables an import fills (``sedma-elo import``; ``Ledger.import_matches`` of many matches),
#: ``ANALYZE``d at its end on PostgreSQL: the columns reads select by (on ``matches`` and
#: ``change_events`` all columns cost about twice as much, their text: 2.2-3.5 s -> 0.9-1.2 s at
#: load 16; the others are all small columns).
IMPORTED_TABLES: dict[str, tuple[str, ...]] = {
    "matches": ("sequence", "match_id", "version_id", "voided"),
    "rating_changes": (),
    "change_events": ("sequence", "kind", "version_id"),
    "players": (),
    "player_ratings": (),
    "rating_counts": (),
}


def analyze(raw: Any, tables: Mapping[str, Sequence[str]]) -> None:
    """``ANALYZE`` each table of ``tables`` (only the columns named, all for none) in ``raw``'s open
    transaction: the planner's statistics of what a bulk load wrote, at once (autovacuum takes them
    a while after the commit; until then the next statements are planned without them). It reads a
    sample of each table, so its cost does not grow with the table's size."""
    for table, columns in tables.items():
        target: sql.Composable = sql.Identifier(table)
        if columns:
            target = sql.SQL("{} ({})").format(target, sql.SQL(", ").join(map(sql.Identifier, columns)))
        raw.execute(sql.SQL("ANALYZE {}").format(target))
