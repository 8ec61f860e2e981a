"""A batch's statements sent to PostgreSQL together, over libpq's pipeline mode.

psycopg's pipeline (``Connection.pipeline()``) sends and polls at every ``execute``: each
statement costs its Python layers (a cursor, the query's conversion, the prepared-statement
manager, a poll and a send) and wakes the server for that statement alone. Measured on this
machine (docs/service-measurements.md, "One send a phase"): 15 statements in a transaction cost the client
1,161-1,521 µs and the server 450-540 µs of CPU through psycopg's pipeline, and 206-216 µs and
165-170 µs queued on the connection's ``pgconn`` and sent in one go. The writer sends its fixed
statements (write_pg.py) through a :class:`Pipe` instead: each is prepared on its
:data:`PREPARE_ON_USE`-th use on a session, under a name of its own; its parameters are dumped by
psycopg's own dumpers (the typed arrays in binary, numbers and texts as text, as psycopg sends
``%s``), and the statements of one phase go out together, up to a ``Sync``.

Between two phases (after :meth:`Pipe.sync`) the connection is out of pipeline mode and psycopg
can use it as usual, in the same transaction.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import weakref
from collections.abc import Generator, Sequence
from typing import Any

import psycopg
from psycopg import pq
from psycopg.abc import Buffer
from psycopg.adapt import PyFormat, Transformer
from psycopg.errors import error_from_result
from psycopg.waiting import Ready, Wait

from .pg_arrays import PgArray

__all__ = ["Pending", "Pipe", "forget_prepared"]

_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)
_PLACEHOLDER = re.compile(r"%([sb%])")  # a parameter, or psycopg's escaped "%%"
# Statement texts that are sent unnamed (parsed each time: nothing to plan).
_UNNAMED = frozenset({"BEGIN", "COMMIT"})

#: Query text (psycopg's ``%s``/``%b`` placeholders) -> (its ``$n`` text, its statement name).
_TEXTS: dict[str, tuple[bytes, bytes]] = {}
#: A statement is sent unnamed (planned for its values) on its first uses on a session and
#: prepared on this one, as psycopg does (its ``prepare_threshold``): a plan made once and kept
#: for the session must not be made on the near-empty tables of a new ledger or of an import's
#: first batch, which it would then read by sequential scans for every row (the seed import of
#: ``bench_service.py``, 50,000 matches in batches of 5,000, took 175 s instead of 10 s).
PREPARE_ON_USE = 5


class _Session:
    """What the pipes know of one connection's server session."""

    __slots__ = ("prepared", "uses")

    def __init__(self, prepared: set[bytes]) -> None:
        self.prepared = prepared  # statement names prepared on the session
        self.uses: dict[bytes, int] = {}  # unnamed uses so far of the others


_SESSIONS: weakref.WeakKeyDictionary[psycopg.Connection[Any], _Session] = weakref.WeakKeyDictionary()


def forget_prepared(raw: psycopg.Connection[Any]) -> None:
    """Forget which statements :class:`Pipe` prepared on ``raw``: the next pipe asks the server.

    Called when that may have changed: a failed phase (a statement prepared in it may not be),
    psycopg's ``rollback()`` of a failed transaction (which may send ``DEALLOCATE ALL``).
    """
    _SESSIONS.pop(raw, None)


def _session_of(raw: psycopg.Connection[Any]) -> _Session:
    """What pipes know of ``raw``'s session; its prepared statements asked of the server first."""
    found = _SESSIONS.get(raw)
    if found is None:
        rows = raw.execute(
            "SELECT name FROM pg_prepared_statements WHERE name LIKE 'sedma\\_pipe\\_%'", prepare=False
        ).fetchall()
        found = _SESSIONS.setdefault(raw, _Session({str(r[0]).encode() for r in rows}))
    return found


def _numbered(query: str) -> tuple[bytes, bytes]:
    """``query`` with ``$1``, ``$2``... for its placeholders and ``%`` for each ``%%`` (as psycopg
    reads them), and its statement's name."""
    found = _TEXTS.get(query)
    if found is None:
        count = itertools.count(1)
        text = _PLACEHOLDER.sub(lambda m: "%" if m[1] == "%" else f"${next(count)}", query)
        # Named by the text itself, so a name can never stand for another text on a session.
        name = f"sedma_pipe_{hashlib.sha1(text.encode()).hexdigest()[:20]}"
        found = _TEXTS.setdefault(query, (text.encode(), name.encode()))
    return found


class Pending:
    """The result of one statement sent through a :class:`Pipe`, there after its phase's sync."""

    __slots__ = ("_pipe", "_rows")

    def __init__(self, pipe: Pipe) -> None:
        self._pipe = pipe
        self._rows: list[tuple[Any, ...]] | None = None

    def fetchall(self) -> list[tuple[Any, ...]]:
        """The statement's rows (ending its phase first: one round trip).

        Raises:
            psycopg.Error: a statement of the phase failed.
        """
        if self._rows is None:
            self._pipe.sync()
        assert self._rows is not None
        return self._rows

    def fetchone(self) -> tuple[Any, ...] | None:
        """The statement's first row, or None (see :meth:`fetchall`)."""
        rows = self.fetchall()
        return rows[0] if rows else None


class Pipe:
    """Statements queued on a psycopg connection's libpq connection and sent together.

    ``raw`` must be idle in pipeline terms (no psycopg pipeline open). :meth:`execute` queues a
    statement (entering pipeline mode on the first); :meth:`flush` sends what is queued without
    waiting; :meth:`sync` sends the rest and a ``Sync`` and waits for every result up to it, then
    leaves pipeline mode. Use it in a ``with`` block: leaving the block on an
    exception drains what is in flight, so the connection is usable (or broken) afterwards.
    """

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self._raw = raw
        self._pg = raw.pgconn
        self._tx = Transformer(raw)
        self._session = _session_of(raw)
        self._queued: list[Pending | None] = []  # None: a statement's preparation
        self._sent = False  # the phase's Sync is queued

    def __enter__(self) -> Pipe:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is not None and self._pg.pipeline_status != pq.PipelineStatus.OFF:
            self._drain()

    def execute(self, query: str, params: Sequence[Any] = ()) -> Pending:
        """Queue ``query`` (psycopg's ``%s``/``%b`` placeholders) with ``params``: typed arrays
        (:class:`~.pg_arrays.PgArray`) go in binary, ``None`` as NULL, anything else as its text."""
        values: list[Buffer | None] = []
        formats: list[pq.Format] = []
        for value in params:
            if isinstance(value, PgArray):
                values.append(self._tx.get_dumper(value, PyFormat.BINARY).dump(value))
                formats.append(pq.Format.BINARY)
            else:
                values.append(None if value is None else str(value).encode())
                formats.append(pq.Format.TEXT)
        if self._pg.pipeline_status == pq.PipelineStatus.OFF:  # the phase's first statement
            self._pg.enter_pipeline_mode()
        if query in _UNNAMED:
            self._pg.send_query_params(query.encode(), None)
        else:
            self._send(query, values, formats)
        pending = Pending(self)
        self._queued.append(pending)
        return pending

    def _send(self, query: str, values: list[Buffer | None], formats: list[pq.Format]) -> None:
        text, name = _numbered(query)
        session = self._session
        if name not in session.prepared:
            uses = session.uses.get(name, 0) + 1
            if uses < PREPARE_ON_USE:
                session.uses[name] = uses
                self._pg.send_query_params(text, values, param_formats=formats)
                return
            self._pg.send_prepare(name, text)
            self._queued.append(None)
            session.prepared.add(name)
        self._pg.send_query_prepared(name, values, param_formats=formats)

    def flush(self) -> None:
        """Send the statements queued so far, without a ``Sync`` and without waiting for results:
        the server works on them while the caller goes on (and may queue more)."""
        if self._queued:
            self._raw.wait(_flush(self._pg))

    def _send_sync(self) -> None:
        if not self._sent:
            self._pg.pipeline_sync()
            self._sent = True
        self._raw.wait(_flush(self._pg))

    def sync(self) -> None:
        """Send what is queued and a ``Sync``, and wait for every result up to it;
        the :class:`Pending` results are then filled and the connection is out of pipeline mode.

        Raises:
            psycopg.Error: the first statement of the phase that failed (the later ones were skipped
                by the server); the statements this pipe prepared are forgotten then.
        """
        if not self._queued:
            return
        self._send_sync()
        queued, self._queued, self._sent = self._queued, [], False
        results = self._raw.wait(_until_sync(self._pg))  # raises only for a lost connection
        self._pg.exit_pipeline_mode()
        if len(results) != len(queued):  # pragma: no cover - a protocol error, not a data one
            raise psycopg.InternalError(f"{len(results)} results for {len(queued)} statements")
        failed = next((r for r in results if r.status not in _OK), None)
        if failed is not None:
            forget_prepared(self._raw)
            if failed.status == pq.ExecStatus.FATAL_ERROR:
                raise error_from_result(failed, encoding=self._raw.info.encoding)
            raise psycopg.OperationalError(f"a pipelined statement ended {pq.ExecStatus(failed.status).name}")
        for pending, result in zip(queued, results, strict=True):
            if pending is not None:
                pending._rows = self._rows(result)

    def _rows(self, result: pq.abc.PGresult) -> list[tuple[Any, ...]]:
        if result.status != pq.ExecStatus.TUPLES_OK or not result.ntuples:
            return []
        self._tx.set_pgresult(result)
        return self._tx.load_rows(0, result.ntuples, tuple)

    def _drain(self) -> None:
        """After an exception: end the phase in flight so the connection can be rolled back."""
        forget_prepared(self._raw)
        try:
            if self._queued or self._sent:
                self._send_sync()
                self._raw.wait(_until_sync(self._pg))
            self._pg.exit_pipeline_mode()
        except psycopg.Error:  # the connection is lost: its session drops it (write_pg.unusable)
            pass
        finally:
            self._queued, self._sent = [], False


def _flush(pg: pq.abc.PGconn) -> Generator[Wait, Ready | int, None]:
    """Send libpq's output buffer, reading meanwhile so that neither side blocks on a full buffer."""
    while pg.flush():
        ready = yield Wait.RW
        if ready & Ready.R:
            pg.consume_input()


def _until_sync(pg: pq.abc.PGconn) -> Generator[Wait, Ready | int, list[pq.abc.PGresult]]:
    """Every statement's result up to the pipeline's ``Sync`` (one each, in the order sent)."""
    results: list[pq.abc.PGresult] = []
    while True:
        while pg.is_busy():
            yield Wait.R
            pg.consume_input()
        result = pg.get_result()
        if result is None:  # the end of one statement's results
            continue
        if result.status == pq.ExecStatus.PIPELINE_SYNC:
            return results
        results.append(result)
