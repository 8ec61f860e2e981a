"""Engines for SQLite and PostgreSQL, opened with their schema brought up to date (:mod:`.migrate`).

SQLite runs in WAL mode with a busy timeout and ``synchronous=FULL`` (an acknowledged write survives
a crash and a power cut); the write engine opens every transaction with ``BEGIN IMMEDIATE`` so that
writers queue for the lock up front instead of failing on upgrade. PostgreSQL is reached through
psycopg 3; any ``postgresql://`` URL is rewritten to ``postgresql+psycopg://``.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from ..errors import DatabaseError
from .migrate import upgrade
from .urls import check_database_url, in_memory_refused, is_in_memory, normalize_url, sqlite_path

__all__ = [
    "Database",
    "WriteLock",
    "database_error",
    "open_checked",
    "open_database",
]

#: Seconds to wait for a PostgreSQL connection: an unreachable server is an error, not a hang.
CONNECT_TIMEOUT = 10
_T = TypeVar("_T")
_PG_CONNECT_ARGS = {"connect_timeout": CONNECT_TIMEOUT}


def _sqlite_engine(url: str, *, immediate: bool, pool_size: int, wal_bound: int | None = None) -> Engine:
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": 30},
        pool_size=pool_size,
        max_overflow=pool_size,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit the BEGIN itself (pysqlite's own would be deferred).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA synchronous=FULL")
        cur.execute("PRAGMA foreign_keys=ON")
        if wal_bound is not None:
            cur.execute(f"PRAGMA wal_autocheckpoint={int(wal_bound)}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class WriteLock:
    """Serialises write transactions on one SQLite file across threads and processes.

    SQLite lets one writer in at a time; a second one spins in its busy handler, sleeping 1, 2, 5,
    10... ms between tries, which gave several API processes on one file p99 latencies over a
    second. Waiting on an exclusive ``flock`` of ``<database>-writer.lock`` instead queues writers
    and wakes the next one as soon as the lock is free. The database file itself is never opened
    here: closing a descriptor of it would drop SQLite's own POSIX locks. Without ``path`` (an
    in-memory database) only the threads of this process are serialised.
    """

    def __init__(self, path: Path | None) -> None:
        self._threads = threading.Lock()
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if path is not None else None

    def __enter__(self) -> None:
        self._threads.acquire()
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)  # waits with the GIL released
            except BaseException:
                self._threads.release()
                raise

    def try_acquire(self) -> bool:
        """Take the lock if it is free now (then release it by ``__exit__``); never wait."""
        if not self._threads.acquire(blocking=False):
            return False
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._threads.release()
                return False
        return True

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._threads.release()

    def close(self) -> None:
        """Close the lock file (the lock must not be held)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class Database:
    """A database reached through two engines: ``read`` for queries and ``write`` for changes.

    On SQLite they differ (``BEGIN`` versus ``BEGIN IMMEDIATE``); on PostgreSQL they are one engine.
    """

    url: str
    read: Engine
    write: Engine
    fast: Engine | None = None
    write_lock: WriteLock | None = field(default=None, repr=False)

    @contextmanager
    def begin_write(self) -> Iterator[Connection]:
        """A write transaction on ``write``: committed on success, rolled back on an exception.

        On SQLite the whole transaction, commit included, holds the :class:`WriteLock`, so writers
        of every process take turns without busy-waiting.
        """
        if self.write_lock is None:
            with self.write.begin() as conn:
                yield conn
            return
        with self.write_lock, self.write.begin() as conn:
            yield conn

    @contextmanager
    def try_write(self, wait_ms: int = 50) -> Iterator[Connection | None]:
        """A short write transaction if the database can take one at once, else ``None``.

        For a write a read may do or skip (a cache): on SQLite only if the :class:`WriteLock` is
        free now; on PostgreSQL a row lock is waited for at most ``wait_ms`` (then the statement
        fails, and the transaction rolls back: the caller skips its write).
        """
        if self.write.dialect.name == "postgresql":
            with self.write.begin() as conn:
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{int(wait_ms)}ms'")
                yield conn
            return
        if self.write_lock is None:
            with self.write.begin() as conn:
                yield conn
            return
        if not self.write_lock.try_acquire():
            yield None
            return
        try:
            with self.write.begin() as conn:
                yield conn
        finally:
            self.write_lock.__exit__(None, None, None)

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one read-only statement on a pooled autocommit DBAPI connection; return all rows.

        For hot read paths: it skips SQLAlchemy's statement and result layers. Write ``?`` for
        parameters (rewritten to ``%s`` for psycopg). Each call sees the latest committed data.

        A pooled connection the server has dropped (a restart, ``pg_terminate_backend``) is found
        broken when the statement fails: the pool is then emptied and the statement tried once on
        a new connection. (Pre-ping would cost a round trip on every read instead.)

        Raises:
            what the driver raises (the database cannot be reached, a bad statement...).
        """
        engine = self.fast or self.read
        if self.dialect != "sqlite":
            sql = sql.replace("?", "%s")
        return _run_reconnecting(engine, sql, params)

    def read_many(self, read: Callable[[Connection], _T]) -> _T:
        """``read(conn)`` on a pooled connection for several read-only statements; its result.

        On PostgreSQL the connection is the autocommit engine's: nothing is rolled back when it goes
        back to the pool, so the driver keeps its prepared statements and the server their plans
        (a rollback made psycopg deallocate them all, and a ten-join statement of the player page
        was planned at every call: 3.4 ms of planning for 0.2 ms of work). Each statement sees the
        data committed when it starts, as under the default READ COMMITTED. On SQLite it is the read
        engine's connection, one snapshot for the whole call.

        A connection the server dropped (a restart, ``pg_terminate_backend``) fails ``read``; the
        pool is then emptied and ``read`` run once more on a new connection, so ``read`` must not
        write. (The read engine pings at each checkout instead: a round trip every time.)

        Raises:
            what ``read`` raises (the second attempt's error when both failed).
        """
        if self.fast is None:
            with self.read.connect() as conn:
                return read(conn)
        fast = self.fast

        def attempt() -> _T:
            with fast.connect() as conn:
                try:
                    return read(conn)
                except Exception as exc:
                    if conn.invalidated or _is_broken(conn.connection.driver_connection):
                        raise _ConnectionLost from exc
                    raise

        return _reconnecting(fast, attempt)

    def ping(self) -> None:
        """Run ``SELECT 1`` on each engine the service reads and writes through.

        Raises:
            what the driver raises while the database cannot be reached.
        """
        for engine in dict.fromkeys((self.read, self.write, self.fast)):
            if engine is not None:
                _run_reconnecting(engine, "SELECT 1", ())

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.write.dialect.name

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.read.dispose()
        if self.write is not self.read:
            self.write.dispose()
        if self.fast is not None:
            self.fast.dispose()
        if self.write_lock is not None:
            self.write_lock.close()


class _ConnectionLost(Exception):
    """A pooled connection turned out to be dead; ``__cause__`` is the driver's error."""


def _run(engine: Engine, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
    """All rows of ``sql`` on a raw pooled connection of ``engine``.

    Raises:
        _ConnectionLost: the connection was broken (it is invalidated, never pooled again).
    """
    conn = engine.raw_connection()
    try:
        cur = conn.cursor()
        try:
            cur.execute(sql, params)
            return list(cur.fetchall())
        finally:
            cur.close()
    except Exception as exc:
        if _is_broken(conn.driver_connection):
            conn.invalidate()
            raise _ConnectionLost from exc
        raise
    finally:
        conn.close()


def _run_reconnecting(engine: Engine, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
    """:func:`_run`, tried once more on a fresh pool when the connection turned out to be dead.

    Raises:
        what the driver raises (the second attempt's error when both failed).
    """
    return _reconnecting(engine, lambda: _run(engine, sql, params))


def _reconnecting(engine: Engine, attempt: Callable[[], _T]) -> _T:
    """``attempt()``, run once more on a fresh pool of ``engine`` if it raised :class:`_ConnectionLost`.

    Raises:
        what ``attempt`` raises, the driver's error for a lost connection (the second's when both
        attempts lost theirs).
    """
    try:
        return attempt()
    except _ConnectionLost:
        # Every connection pooled before the loss is likely dead too: start the pool afresh.
        engine.dispose()
    try:
        return attempt()
    except _ConnectionLost as lost:
        cause = lost.__cause__
        assert cause is not None
        raise cause from None


def _is_broken(raw: Any) -> bool:
    """Whether a DBAPI connection can no longer be used (psycopg knows; sqlite3 never breaks)."""
    return bool(getattr(raw, "broken", False) or getattr(raw, "closed", False) is True)


def open_database(
    url: str | None = None,
    *,
    pool_size: int = 8,
    migrate: bool = True,
    fast_pool_size: int | None = None,
    max_overflow: int | None = None,
    wal_bound: int | None = None,
) -> Database:
    """Open the database at ``url`` (see :func:`normalize_url`), creating and upgrading its schema.

    The engine's pool holds ``pool_size`` connections, the fast read engine's (PostgreSQL)
    ``fast_pool_size``; both may open ``max_overflow`` more at busy times (default: as many again
    as ``pool_size``). ``wal_bound`` (SQLite: pages) is the writers' ``wal_autocheckpoint``, for a
    process that checkpoints on a thread of its own (:class:`~.checkpoint.WalCheckpointer`);
    ``None`` keeps SQLite's 1,000.

    Raises:
        sqlalchemy.exc.ArgumentError: the URL is not understood.
        ValidationError: an in-memory SQLite database (field ``database_url``): it keeps no ledger.
    """
    url = normalize_url(url)
    parsed = make_url(url)
    overflow = pool_size if max_overflow is None else max_overflow
    write_lock = None
    if parsed.get_backend_name() == "sqlite":
        if is_in_memory(parsed.database, parsed.query):
            raise in_memory_refused(url)
        path = Path(str(parsed.database)).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_lock = WriteLock(path.with_name(path.name + "-writer.lock"))
        read = _sqlite_engine(url, immediate=False, pool_size=pool_size)
        write = _sqlite_engine(url, immediate=True, pool_size=2, wal_bound=wal_bound)
    else:
        read = write = create_engine(
            url,
            pool_size=pool_size,
            max_overflow=overflow,
            pool_pre_ping=True,
            connect_args=_PG_CONNECT_ARGS,
        )
    fast = None
    if parsed.get_backend_name() != "sqlite":
        # Autocommit and read-only: nothing to reset when a connection goes back to the pool (the
        # reset's rollback was a tenth of the CPU of a player read).
        fast = create_engine(
            url,
            pool_size=pool_size if fast_pool_size is None else fast_pool_size,
            max_overflow=overflow,
            isolation_level="AUTOCOMMIT",
            pool_reset_on_return=None,
            connect_args=_PG_CONNECT_ARGS,
        )
    db = Database(url, read, write, fast, write_lock)
    if migrate:
        upgrade(db)
    return db


# ---------------------------------------------------------------------------- checked opening
def database_error(exc: BaseException, url: str | None = None) -> DatabaseError:
    """A :class:`~sedma_elo.errors.DatabaseError` saying what the driver's error means, briefly.

    The driver's first line is kept (``connection to server at "127.0.0.1", port 5999 failed:
    Connection refused``, ``database "x" does not exist``, ``unable to open database file``); a
    password in ``url`` is never shown.
    """
    cause = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    reason = lines[0] if lines else type(cause).__name__
    if url is None:
        return DatabaseError(f"database: {reason}")
    shown = make_url(normalize_url(url)).render_as_string(hide_password=True)
    return DatabaseError(f"database {shown}: {reason}")


def open_checked(url: str | None, *, create: bool, pool_size: int = 8, migrate: bool = True) -> Database:
    """:func:`open_database` with every user mistake raised as a project error (``migrate=False``:
    the schema is left at its revision, for ``sedma-elo db downgrade``).

    With ``create=False`` a SQLite file that does not exist is an error instead of being created
    (a mistyped path must not yield an empty ledger). PostgreSQL databases are never created.

    Raises:
        ValidationError: the URL is unusable (see :func:`check_database_url`).
        DatabaseError: the SQLite file does not exist (``create=False``) or cannot be created, the
            server cannot be reached, the database does not exist or is not a database.
    """
    normal = check_database_url(url)
    path = sqlite_path(normal)
    shown = make_url(normal).render_as_string(hide_password=True)
    if path is not None:
        if path.is_dir():
            raise DatabaseError(f"database {shown}: {path} is a directory, not a database file")
        if not create and not path.exists():
            raise DatabaseError(
                f"database {shown}: no SQLite database at {path} (nothing was created; "
                "`sedma-elo db upgrade`, `import` or `serve --create` create one)"
            )
    try:
        return open_database(normal, pool_size=pool_size, migrate=migrate)
    except OSError as exc:
        raise DatabaseError(f"database {shown}: {exc.strerror or exc}") from None
    except DBAPIError as exc:
        raise database_error(exc, normal) from None
