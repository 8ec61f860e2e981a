"""Typed arrays for the PostgreSQL write path: lists whose element type is declared, not searched.

psycopg dumps a plain ``list`` by scanning it for its elements' type (and for ints their largest
value, to pick ``int2``, ``int4`` or ``int8``), twice, then dumps the elements one by one in
Python. A batch of the writer sends about 35 arrays, so that was about a tenth of the writer's
CPU (docs/service-measurements.md, "Typed arrays for the writer"). An :class:`Int4Array` and its kin are lists
that say their PostgreSQL type; their dumpers write the binary array format in one ``struct``
call for the numbers and one join for texts and bytes. ``None`` is SQL ``NULL`` in every kind.
Dumping raises :class:`struct.error` for a number that is not an ``int`` or is outside its type's
range (it never wraps), and :class:`AttributeError` or :class:`TypeError` for a text or bytes
element of another Python type.

The dumpers are registered on psycopg's global adapters when this module is imported, before any
connection is made (the ledger package imports it). A connection without them still dumps these
lists correctly, as plain lists.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, ClassVar

import psycopg
from psycopg import pq
from psycopg.adapt import Dumper

__all__ = ["ByteaArray", "Int2Array", "Int4Array", "Int8Array", "PgArray", "TextArray", "array_of"]

_HEAD = struct.Struct("!iiiii")  # dimensions, has nulls, element oid; one dimension: length, lower bound
_EMPTY_HEAD = struct.Struct("!iii")
_NULL = struct.pack("!i", -1)
_LEN = struct.Struct("!i")


class PgArray(list[Any]):
    """A list dumped as a one-dimensional PostgreSQL array of :attr:`type_name` (``None``: NULL)."""

    type_name: ClassVar[str]


class Int2Array(PgArray):
    """``smallint[]``: each element an ``int`` in -32,768..32,767 or ``None``."""

    type_name = "smallint"


class Int4Array(PgArray):
    """``integer[]``: each element an ``int`` in -2**31..2**31-1 or ``None``."""

    type_name = "integer"


class Int8Array(PgArray):
    """``bigint[]``: each element an ``int`` in -2**63..2**63-1 or ``None``."""

    type_name = "bigint"


class TextArray(PgArray):
    """``text[]``: each element a ``str`` (no NUL character) or ``None``."""

    type_name = "text"


class ByteaArray(PgArray):
    """``bytea[]``: each element ``bytes`` or ``None``."""

    type_name = "bytea"


_KINDS: dict[str, type[PgArray]] = {
    k.type_name: k for k in (Int2Array, Int4Array, Int8Array, TextArray, ByteaArray)
}


def array_of(type_name: str, values: Iterable[Any]) -> PgArray:
    """``values`` as the typed array of the SQL type ``type_name`` (``smallint``, ``integer``,
    ``bigint``, ``text`` or ``bytea``). Raises :class:`KeyError` for another type."""
    return _KINDS[type_name](values)


@lru_cache(maxsize=512)
def _numbers(code: str, count: int) -> struct.Struct:
    """The body of ``count`` non-null numbers of the ``struct`` code ``code``: each its length, its value."""
    return struct.Struct("!" + f"i{code}" * count)


class _NumberArrayDumper(Dumper):
    """Binary dumper of a one-dimensional array of ``struct`` code :attr:`code` (:attr:`width` bytes)."""

    format = pq.Format.BINARY
    code: ClassVar[str]
    width: ClassVar[int]
    single: ClassVar[struct.Struct]
    element_oid: ClassVar[int]

    def dump(self, obj: Any) -> bytes:
        n = len(obj)
        if not n:
            return _EMPTY_HEAD.pack(0, 0, self.element_oid)
        if None not in obj:
            body = _numbers(self.code, n).pack(*[x for v in obj for x in (self.width, v)])
            return _HEAD.pack(1, 0, self.element_oid, n, 1) + body
        single, width = self.single, self.width
        parts = [_NULL if v is None else single.pack(width, v) for v in obj]
        return _HEAD.pack(1, 1, self.element_oid, n, 1) + b"".join(parts)


class _BytesArrayDumper(Dumper):
    """Binary dumper of a one-dimensional array whose elements :attr:`encode` turns into bytes."""

    format = pq.Format.BINARY
    element_oid: ClassVar[int]
    encode: ClassVar[Callable[[Any], bytes]]

    def dump(self, obj: Any) -> bytes:
        n = len(obj)
        if not n:
            return _EMPTY_HEAD.pack(0, 0, self.element_oid)
        parts = [_HEAD.pack(1, 0, self.element_oid, n, 1)]
        nulls = 0
        encode = type(self).encode
        for v in obj:
            if v is None:
                nulls = 1
                parts.append(_NULL)
            else:
                data = encode(v)
                parts.append(_LEN.pack(len(data)))
                parts.append(data)
        if nulls:
            parts[0] = _HEAD.pack(1, 1, self.element_oid, n, 1)
        return b"".join(parts)


def _dumper(kind: type[PgArray], base: type[Dumper], **attrs: Any) -> type[Dumper]:
    info = psycopg.adapters.types[kind.type_name]
    assert info.array_oid
    attrs |= {"oid": info.array_oid, "element_oid": info.oid}
    return type(f"{kind.__name__}Dumper", (base,), attrs)


def _number_dumper(kind: type[PgArray], code: str) -> type[Dumper]:
    """The dumper of ``kind``, whose elements are the ``struct`` code ``code`` (its width derived)."""
    single = struct.Struct(f"!i{code}")
    return _dumper(kind, _NumberArrayDumper, code=code, width=single.size - 4, single=single)


def _utf8(value: str) -> bytes:
    return value.encode()


_DUMPERS: dict[type[PgArray], type[Dumper]] = {
    Int2Array: _number_dumper(Int2Array, "h"),
    Int4Array: _number_dumper(Int4Array, "i"),
    Int8Array: _number_dumper(Int8Array, "q"),
    TextArray: _dumper(TextArray, _BytesArrayDumper, encode=staticmethod(_utf8)),
    ByteaArray: _dumper(ByteaArray, _BytesArrayDumper, encode=staticmethod(bytes)),
}
for _kind, _cls in _DUMPERS.items():
    psycopg.adapters.register_dumper(_kind, _cls)
