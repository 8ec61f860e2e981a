"""Whether the database's indexes and keys are all there, usable and as declared: what ``verify``
reports beside ratings, ``serve`` logs at start-up and ``/metrics`` counts.

A missing or unusable index changes no answer, only how long it takes. Stop 41 (2026-12-06)
found every PostgreSQL ledger filled by ``sedma-elo import`` reading one match's changes by a
scan of its whole version (548 ms at 10 M matches, 0.1 ms by the index): the import had built
the sequence index again on the partitioned parent alone, where PostgreSQL keeps it invalid until
every partition has its part. PostgreSQL also leaves an index invalid after a failed or cancelled
``CREATE INDEX CONCURRENTLY`` or ``REINDEX CONCURRENTLY``, and an operator may drop one, or make it
again with other columns. A missing primary key or unique constraint is worse: nothing refuses a
second row with the same key (a match id stored twice), so those are checked too, by what the
database enforces (a unique index on the declared columns, whatever its name), not by name.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import Column, Connection, Index, Table, UniqueConstraint
from sqlalchemy.sql.elements import UnaryExpression
from sqlalchemy.sql.operators import desc_op

from .schema import metadata

__all__ = ["index_faults"]


class _Found(NamedTuple):
    """One index as the database's catalogs describe it."""

    table: str
    columns: tuple[str, ...]  # key columns in order, each ``name`` or ``name DESC``
    include: tuple[str, ...]  # PostgreSQL's INCLUDE columns
    unique: bool
    usable: bool  # PostgreSQL: valid and ready; SQLite: always
    partial: bool = False  # with a WHERE clause: it covers, and a unique one refuses, only some rows


#: Every index of the current schema: its name, its table's, whether unique, primary, usable and
#: partial, its number of key columns, their ``indoption`` (bit 1: descending) and the names of
#: all its columns, key columns first, then INCLUDE's (NULL for an expression).
_PG_INDEXES = """
SELECT c.relname, t.relname, i.indisunique, i.indisprimary, i.indisvalid AND i.indisready,
       i.indpred IS NOT NULL, i.indnkeyatts, i.indoption::int2[],
       ARRAY(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY AS k(n, o)
             LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
WHERE c.relnamespace = current_schema()::regnamespace
"""
_PG_TABLES = (
    "SELECT relname FROM pg_class"
    " WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')"
)
_SQLITE_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"


class _Catalog(NamedTuple):
    tables: set[str]
    indexes: dict[str, _Found]
    primary: dict[str, tuple[str, ...]]  # table -> its primary key's columns


def index_faults(conn: Connection) -> list[str]:
    """One sentence for each fault of the indexes and keys of ``conn``'s database, sorted (empty: none).

    Faults, for the tables and indexes :mod:`.schema` declares:

    * a declared index is missing, or its key columns (with their order and direction), its
      uniqueness, (PostgreSQL) its ``INCLUDE`` columns or a ``WHERE`` clause differ from the
      declaration;
    * a table's primary key is missing or on other columns; a declared unique constraint has no
      unique index on all rows of its columns (nothing refuses a duplicate);
    * on PostgreSQL, an index of the current schema is invalid or not ready (the planner does not
      use it, and a unique one refuses nothing).

    Reads the catalogs only (a few milliseconds). Tables the database does not have are left out.
    """
    pg = conn.dialect.name == "postgresql"
    found = _pg_catalog(conn) if pg else _sqlite_catalog(conn)
    faults: dict[str, str] = {}
    for table in metadata.tables.values():
        if table.name in found.tables:
            faults.update(_table_faults(table, found, pg))
    for name, index in found.indexes.items():
        if not index.usable:
            faults[name] = (
                f"index {name} of {index.table} is not valid, so PostgreSQL does not use it (a build that"
                " failed, or a partitioned table's index that a partition lacks): docs/service.md,"
                ' "Indexes"'
            )
    return [faults[key] for key in sorted(faults)]


def _table_faults(table: Table, found: _Catalog, pg: bool) -> dict[str, str]:
    """The faults of one declared table that the database has, keyed for sorting."""
    faults: dict[str, str] = {}
    for index in table.indexes:
        name = str(index.name)
        declared = _declared(index, pg)
        have = found.indexes.get(name)
        if have is None:
            faults[name] = f"index {name} of {table.name} is missing: its reads scan the table instead"
        elif have._replace(usable=True) != declared:  # validity is a fault of its own (index_faults)
            faults[name] = (
                f"index {name} of {have.table} is {_describe(have)} where storage/schema.py declares"
                f" {_describe(declared)}: its reads may scan the table instead"
            )
    key = tuple(str(c.name) for c in table.primary_key.columns)
    have_key = found.primary.get(table.name)
    if key and have_key is None:
        faults[f"{table.name} primary key"] = (
            f"the primary key of {table.name} ({', '.join(key)}) is missing: nothing refuses a second"
            " row with the same key"
        )
    elif key and have_key is not None and have_key != key:
        faults[f"{table.name} primary key"] = (
            f"the primary key of {table.name} is ({', '.join(have_key)}) where storage/schema.py declares"
            f" ({', '.join(key)})"
        )
    for constraint in table.constraints:
        if isinstance(constraint, UniqueConstraint):
            columns = tuple(str(c.name) for c in constraint.columns)
            if not _enforced(found, table.name, columns):
                faults[f"{table.name} unique {columns}"] = (
                    f"the unique constraint of {table.name} on ({', '.join(columns)}) is missing:"
                    " nothing refuses a duplicate"
                )
    return faults


def _enforced(found: _Catalog, table: str, columns: tuple[str, ...]) -> bool:
    """Whether a usable unique index of ``table`` on all its rows has exactly ``columns`` as its key
    (in any order)."""
    want = set(columns)
    return any(
        i.table == table
        and i.unique
        and i.usable
        and not i.partial
        and {c.removesuffix(" DESC") for c in i.columns} == want
        for i in found.indexes.values()
    )


def _declared(index: Index, pg: bool) -> _Found:
    """A declared index as :class:`_Found` would describe it in a database that has it as declared."""
    columns = []
    for expr in index.expressions:
        if isinstance(expr, UnaryExpression) and expr.modifier is desc_op:
            columns.append(f"{_column(expr.element).name} DESC")
        else:
            columns.append(str(_column(expr).name))
    include = tuple(index.dialect_options["postgresql"]["include"] or ()) if pg else ()
    assert index.table is not None
    return _Found(index.table.name, tuple(columns), include, bool(index.unique), usable=True)


def _column(expr: object) -> Column[object]:
    if not isinstance(expr, Column):  # the schema declares no expression index
        raise TypeError(f"an index on {expr!r}: only columns, ascending or descending, are checked")
    return expr


def _describe(index: _Found) -> str:
    include = f" INCLUDE ({', '.join(index.include)})" if index.include else ""
    where = " WHERE ..." if index.partial else ""
    return f"{'UNIQUE ' if index.unique else ''}({', '.join(index.columns)}){include}{where}"


def _pg_catalog(conn: Connection) -> _Catalog:
    tables = {str(name) for (name,) in conn.exec_driver_sql(_PG_TABLES)}
    indexes: dict[str, _Found] = {}
    primary: dict[str, tuple[str, ...]] = {}
    for name, table, unique, is_primary, usable, partial, nkey, options, names in conn.exec_driver_sql(
        _PG_INDEXES
    ):
        # An expression has no column name: it can match no declared column.
        cols = [str(n) if n is not None else "(expression)" for n in names]
        key = tuple(c + (" DESC" if o & 1 else "") for c, o in zip(cols[:nkey], options, strict=False))
        indexes[str(name)] = _Found(str(table), key, tuple(cols[nkey:]), bool(unique), bool(usable), partial)
        if is_primary:
            primary[str(table)] = tuple(cols[:nkey])
    return _Catalog(tables, indexes, primary)


def _sqlite_catalog(conn: Connection) -> _Catalog:
    quoted = conn.dialect.identifier_preparer.quote_identifier
    tables = {str(name) for (name,) in conn.exec_driver_sql(_SQLITE_TABLES)}
    indexes: dict[str, _Found] = {}
    primary: dict[str, tuple[str, ...]] = {}
    for table in tables:
        # cid, name, type, notnull, default, pk (its place in the primary key, 0: not in it)
        info = conn.exec_driver_sql(f"PRAGMA table_info({quoted(table)})").all()
        key = tuple(str(row[1]) for row in sorted((r for r in info if r[5]), key=lambda r: int(r[5])))
        if key:
            primary[table] = key
        # seq, name, unique, origin ('c' made by CREATE INDEX, 'u' UNIQUE, 'pk'), partial
        listed = conn.exec_driver_sql(f"PRAGMA index_list({quoted(table)})")
        for _, name, unique, _origin, partial in listed:
            # seqno, cid, name, desc, collation, key (1: a key column, 0: the table's own key after it)
            xinfo = conn.exec_driver_sql(f"PRAGMA index_xinfo({quoted(str(name))})").all()
            columns = tuple(
                (str(r[2]) if r[2] is not None else "(expression)") + (" DESC" if r[3] else "")
                for r in xinfo
                if r[5]
            )
            indexes[str(name)] = _Found(table, columns, (), bool(unique), True, bool(partial))
    return _Catalog(tables, indexes, primary)
