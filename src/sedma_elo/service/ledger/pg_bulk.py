"""PostgreSQL: a bulk load's tables without their indexes, built again after the load; ANALYZE.

An index built over a whole table (one sort) costs a fraction of the same index kept up to date a
row at a time, so :func:`without_indexes` drops the indexes of the tables an import into an empty
ledger fills and creates each again, from its own stored definition, when the load is done. DDL is
transactional on PostgreSQL: in the import's transaction, a refused file rolls the drop back with
the rows, and nothing else ever sees the tables without their indexes (the drop holds them
``ACCESS EXCLUSIVE`` until the commit: readers of these tables wait for the import).

An index that a foreign key depends on (``matches``' primary key, which ``kept_answers`` names) is
kept: dropping it would mean dropping the key too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from psycopg import sql

__all__ = ["IMPORTED_TABLES", "analyze", "without_indexes"]

#: Memory for each index build (``SET LOCAL``, this transaction only): one sort of the whole table
#: in memory rather than in runs on disk, on the ATP file's 1.2 M rating changes.
BUILD_MEMORY = "256MB"

_INDEXES = """
SELECT i.indexrelid::regclass::text, i.indrelid::regclass::text, c.conname,
       pg_get_indexdef(i.indexrelid), pg_get_constraintdef(c.oid)
FROM pg_index AS i
LEFT JOIN pg_constraint AS c
  ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u')
WHERE i.indrelid = ANY(CAST(%s AS regclass[]))
  AND NOT EXISTS (SELECT 1 FROM pg_constraint AS f WHERE f.contype = 'f' AND f.conindid = i.indexrelid)
ORDER BY i.indexrelid
"""

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


def _rebuilders(raw: Any, tables: Sequence[str]) -> list[tuple[sql.Composable, sql.Composable]]:
    """``(drop, create)`` statements of each index of ``tables`` that no foreign key depends on."""
    out: list[tuple[sql.Composable, sql.Composable]] = []
    for index, table, constraint, index_def, constraint_def in raw.execute(_INDEXES, (list(tables),)):
        if constraint is None:
            out.append((sql.SQL("DROP INDEX {}").format(sql.SQL(index)), sql.SQL(index_def)))
        else:
            name = sql.Identifier(constraint)
            on = sql.SQL(table)
            out.append(
                (
                    sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(on, name),
                    sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {}").format(on, name, sql.SQL(constraint_def)),
                )
            )
    return out


@contextlib.contextmanager
def without_indexes(raw: Any, tables: Sequence[str]) -> Iterator[None]:
    """Within ``raw``'s open transaction: ``tables`` without their indexes until the block ends
    without an error, then each built again as it was (an error leaves the rollback to the caller)."""
    statements = _rebuilders(raw, tables)
    for drop, _ in statements:
        raw.execute(drop)
    yield
    raw.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
    for _, create in statements:
        raw.execute(create)


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
