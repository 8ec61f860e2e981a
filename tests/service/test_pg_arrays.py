"""The writer's typed arrays reach PostgreSQL as the values they hold, and skip psycopg's type search."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.adapt import PyFormat
from psycopg.types.array import ListBinaryDumper

from sedma_elo.service.ledger.pg_arrays import (
    ByteaArray,
    Int2Array,
    Int4Array,
    Int8Array,
    PgArray,
    TextArray,
    array_of,
)
from sedma_elo.storage import libpq_url

pytestmark = pytest.mark.postgres

_KINDS: list[tuple[type[PgArray], st.SearchStrategy[Any]]] = [
    (Int2Array, st.integers(-(2**15), 2**15 - 1)),
    (Int4Array, st.integers(-(2**31), 2**31 - 1)),
    (Int8Array, st.integers(-(2**63), 2**63 - 1)),
    (TextArray, st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]))),
    (ByteaArray, st.binary(max_size=40)),
]


@pytest.fixture(scope="module")
def conn(pg_database: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(libpq_url(pg_database), autocommit=True) as c:
        yield c


def _server_sees(conn: psycopg.Connection[Any], value: PgArray) -> Any:
    row = conn.execute(f"SELECT CAST(%b AS {value.type_name}[])", (value,)).fetchone()
    assert row is not None
    return row[0]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_kind_round_trips_with_nulls(conn: psycopg.Connection[Any], data: st.DataObject) -> None:
    """Any list of a kind's values and None is read back by the server as the same list."""
    kind, element = data.draw(st.sampled_from(_KINDS))
    values = data.draw(st.lists(st.none() | element, max_size=20))
    assert _server_sees(conn, kind(values)) == values


@pytest.mark.parametrize("kind", [k for k, _ in _KINDS])
def test_an_empty_array_is_empty_of_its_type(conn: psycopg.Connection[Any], kind: type[PgArray]) -> None:
    """An empty typed array is the server's empty array of that type."""
    sql = f"SELECT pg_typeof(CAST(%b AS {kind.type_name}[]))::text, %b"
    row = conn.execute(sql, (kind(), kind())).fetchone()
    assert row == (f"{kind.type_name}[]", [])


@pytest.mark.parametrize("kind", [k for k, _ in _KINDS])
def test_psycopg_picks_the_declared_dumper(conn: psycopg.Connection[Any], kind: type[PgArray]) -> None:
    """A connection dumps each kind with its own dumper and its array type's oid, not by scanning the list."""
    dumper = conn.adapters.get_dumper(kind, PyFormat.BINARY)
    assert not issubclass(dumper, ListBinaryDumper)
    info = conn.adapters.types[kind.type_name]
    assert dumper(kind, conn).oid == info.array_oid


def test_an_integer_out_of_its_range_is_refused() -> None:
    """A number too large for its type raises instead of wrapping around."""
    dumper = psycopg.adapters.get_dumper(Int2Array, PyFormat.BINARY)(Int2Array)
    with pytest.raises(struct.error):
        dumper.dump(Int2Array([2**15]))


def test_array_of_names_the_sql_types() -> None:
    """array_of builds the kind of each SQL type name and refuses an unknown one."""
    assert type(array_of("integer", [1])) is Int4Array
    assert type(array_of("bytea", [b""])) is ByteaArray
    with pytest.raises(KeyError):
        array_of("numeric", [1])
