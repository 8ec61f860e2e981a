"""Awaitable read queries, so an event loop is not blocked while PostgreSQL answers.

:meth:`Database.query <sedma_elo.storage.database.Database.query>` blocks its thread for the whole
round trip; served from an event loop, that stalled every other request for it (about 40% of the
loop's time on PostgreSQL player reads). :class:`AsyncReader` runs the same statements on a small
pool of psycopg async connections instead. On SQLite there is no network wait to overlap, so it
runs them inline through ``Database.query``.

Its connections plan each statement once (``plan_cache_mode = force_generic_plan``): its statements
are a handful of fixed keyed reads, each run thousands of times a second, and PostgreSQL's own
choice planned the history read anew at every call, 0.6 ms of planning for 0.2 ms of execution
(docs/service-measurements.md, "The reads at 10 M again").
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import psycopg

from .database import CONNECT_TIMEOUT, Database
from .urls import libpq_url

__all__ = ["AsyncReader"]


class AsyncReader:
    """``await reader.query(sql, params)``: :meth:`Database.query`'s contract, for an event loop.

    At most ``size`` statements run at once, each on its own autocommit connection; connections
    are opened on demand and kept for reuse, each with one plan per statement (generic plans, see
    the module docstring). A reused connection found broken (the server
    restarted, say) is dropped and the statement retried once on a new one. Use it from one event
    loop, and :meth:`close` it on that loop.
    """

    def __init__(self, db: Database, size: int = 16) -> None:
        self.db = db
        self.size = size
        self._pg = db.dialect == "postgresql"
        self._conninfo = libpq_url(db.url)
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._slots: asyncio.Semaphore | None = None

    async def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """All rows of one read-only statement (``?`` placeholders); raises what the driver raises."""
        if not self._pg:
            return self.db.query(sql, params)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.size)
        sql = sql.replace("?", "%s")
        async with self._slots:
            while self._idle:
                conn = self._idle.pop()
                try:
                    return await self._run(conn, sql, params)
                except psycopg.OperationalError:
                    if not conn.broken:
                        raise
            conn = await psycopg.AsyncConnection.connect(
                self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT
            )
            try:
                # A SET, not the URL's ``options``: a studio's own options in the URL stay.
                await conn.execute("SET plan_cache_mode = force_generic_plan")
            except BaseException:
                await _close_quietly(conn)
                raise
            return await self._run(conn, sql, params)

    async def _run(
        self, conn: psycopg.AsyncConnection[Any], sql: str, params: tuple[object, ...]
    ) -> list[tuple[Any, ...]]:
        try:
            cur = await conn.execute(sql, params)
            rows = await cur.fetchall()
        except BaseException:
            # Broken, mid-protocol after a cancellation, or in a failed state: do not reuse it.
            await _close_quietly(conn)
            raise
        self._idle.append(conn)
        return rows

    async def close(self) -> None:
        """Close the idle connections (call when no query is running)."""
        while self._idle:
            await _close_quietly(self._idle.pop())


async def _close_quietly(conn: psycopg.AsyncConnection[Any]) -> None:
    with contextlib.suppress(Exception):  # a connection that is already gone: nothing to release
        await conn.close()
