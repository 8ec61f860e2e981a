"""The writer's pipe sends a phase's statements together and reads back what psycopg would."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedma_elo.service.ledger.pg_arrays import Int4Array, Int8Array, TextArray
from sedma_elo.service.ledger.pg_pipe import PREPARE_ON_USE, Pipe, forget_prepared
from sedma_elo.storage import libpq_url

pytestmark = pytest.mark.postgres

_ROWS = (
    "SELECT u.n, u.t, %s + 1 FROM unnest(CAST(%b AS bigint[]), CAST(%b AS text[])) AS u(n, t) ORDER BY u.n"
)


@pytest.fixture()
def conn(pg_database: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(libpq_url(pg_database), autocommit=True) as c:
        yield c


def _ours(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'sedma%%'").fetchall()
    return sorted(r[0] for r in rows)


def _idle(conn: psycopg.Connection[Any]) -> bool:
    return (
        conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF
        and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), unique=True, max_size=8),
    st.integers(-(2**31), 2**31 - 2),
    st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]), max_size=12),
)
def test_rows_are_the_ones_psycopg_reads(
    pg_database: str, numbers: list[int], offset: int, text: str
) -> None:
    """Arrays in binary, numbers and texts as text: the rows equal psycopg's for the same statement."""
    texts = [f"{text}{i}" for i in range(len(numbers))]
    with psycopg.connect(libpq_url(pg_database), autocommit=True) as conn:
        expected = conn.execute(_ROWS, (offset, Int8Array(numbers), TextArray(texts))).fetchall()
        with Pipe(conn) as pipe:
            got = pipe.execute(_ROWS, (offset, Int8Array(numbers), TextArray(texts)))
            label = pipe.execute("SELECT %s::text, %s::int IS NULL", (text, None))
            assert got.fetchall() == expected
            assert label.fetchone() == (text, True)


def test_an_escaped_percent_is_read_as_psycopg_reads_it(conn: psycopg.Connection[Any]) -> None:
    """``%%`` is a literal ``%`` (not a parameter) in the pipe's statements, as in psycopg's."""
    query = "SELECT %s::int %% 3, 'a%%b' LIKE %s, %s::text"
    params = (7, "a%b", "x")
    expected = conn.execute(query, params).fetchone()
    with Pipe(conn) as pipe:
        assert pipe.execute(query, params).fetchone() == expected == (1, True, "x")


def test_a_phase_is_one_sync_and_leaves_pipeline_mode(conn: psycopg.Connection[Any]) -> None:
    """Every result is there after the first fetch; psycopg then uses the connection as usual."""
    with Pipe(conn) as pipe:
        first = pipe.execute("SELECT %s::int", (1,))
        second = pipe.execute("SELECT %s::int", (2,))
        assert first.fetchone() == (1,)
        assert conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF
        assert second._rows == [(2,)]  # filled by the same sync, no second round trip
    assert conn.execute("SELECT 3").fetchone() == (3,)


def test_a_transaction_spans_two_phases_and_psycopg_between(conn: psycopg.Connection[Any]) -> None:
    """BEGIN in one phase, psycopg's read between, COMMIT in the next: one transaction."""
    conn.execute("CREATE TEMP TABLE t (n int)")
    with Pipe(conn) as pipe:
        pipe.execute("BEGIN")
        pipe.execute("INSERT INTO t SELECT unnest(CAST(%b AS integer[]))", (Int4Array([1, 2]),))
        pipe.sync()
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (2,)
        pipe.execute("INSERT INTO t VALUES (%s)", (3,))
        pipe.flush()
        pipe.execute("COMMIT")
        pipe.sync()
    assert _idle(conn)
    assert conn.execute("SELECT sum(n) FROM t").fetchone() == (6,)


def _use(conn: psycopg.Connection[Any], times: int, query: str = "SELECT %s::int * 2") -> None:
    for n in range(times):
        with Pipe(conn) as pipe:
            pipe.execute(query, (n,)).fetchall()


def test_a_statement_is_prepared_on_its_fifth_use_and_kept(conn: psycopg.Connection[Any]) -> None:
    """Unnamed (planned for its values) four times, then prepared once for the session."""
    _use(conn, PREPARE_ON_USE - 1)
    assert _ours(conn) == []
    _use(conn, 1)
    assert len(_ours(conn)) == 1
    _use(conn, 3)
    assert len(_ours(conn)) == 1


def test_a_forgotten_session_is_asked_again(conn: psycopg.Connection[Any]) -> None:
    """After forget_prepared the pipe learns from the server what is prepared (no duplicate)."""
    _use(conn, PREPARE_ON_USE)
    forget_prepared(conn)
    _use(conn, PREPARE_ON_USE + 1)
    assert len(_ours(conn)) == 1


def test_a_statement_dropped_behind_its_back_fails_once_then_works(conn: psycopg.Connection[Any]) -> None:
    """DEALLOCATE ALL by another party: invalid_sql_statement_name (retryable), then prepared anew."""
    _use(conn, PREPARE_ON_USE, "SELECT %s::int")
    conn.execute("DEALLOCATE ALL")
    with pytest.raises(psycopg.errors.InvalidSqlStatementName), Pipe(conn) as pipe:
        pipe.execute("SELECT %s::int", (1,)).fetchall()
    assert _idle(conn)
    with Pipe(conn) as pipe:
        assert pipe.execute("SELECT %s::int", (4,)).fetchone() == (4,)


def test_a_failing_statement_raises_its_error_and_skips_the_rest(conn: psycopg.Connection[Any]) -> None:
    """The server's error class, the later statements not run, the connection usable after."""
    conn.execute("CREATE TEMP TABLE t (n int)")
    with pytest.raises(psycopg.errors.DivisionByZero), Pipe(conn) as pipe:
        pipe.execute("SELECT %s::int / 0", (1,))
        pipe.execute("INSERT INTO t VALUES (%s)", (1,))
        pipe.sync()
    assert _idle(conn)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_an_exception_in_the_block_drains_the_phase(conn: psycopg.Connection[Any]) -> None:
    """Raising with statements queued (some flushed) leaves the connection out of pipeline mode."""
    conn.execute("CREATE TEMP TABLE t (n int)")
    with pytest.raises(RuntimeError, match="boom"), Pipe(conn) as pipe:
        pipe.execute("BEGIN")
        pipe.execute("INSERT INTO t VALUES (%s)", (1,))
        pipe.flush()
        pipe.execute("INSERT INTO t VALUES (%s)", (2,))
        raise RuntimeError("boom")
    assert conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF
    conn.rollback()
    assert _idle(conn)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_a_value_that_cannot_be_dumped_sends_nothing(conn: psycopg.Connection[Any]) -> None:
    """An out-of-range number fails before its statement is queued; the connection stays usable."""
    with pytest.raises(struct.error), Pipe(conn) as pipe:
        pipe.execute("SELECT CAST(%b AS integer[])", (Int4Array([2**31]),))
    assert _idle(conn)
    assert conn.execute("SELECT 1").fetchone() == (1,)
