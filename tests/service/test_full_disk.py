"""A full disk or a lost database (issue 12 row 7): 503 with a JSON body and Retry-After, one log line
per failure kind per interval, nothing acknowledged lost, recovery without a restart."""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from conftest import Api, make_api, single
from sedma_elo.errors import StorageUnavailableError
from sedma_elo.service import faults
from sedma_elo.service.faults import FailureLog
from sedma_elo.storage.faults import storage_unavailable

pytestmark = pytest.mark.faults


def _full_sqlite_error(tmp_path: Path) -> sqlite3.OperationalError:
    """The error SQLite raises when it cannot grow a file: ``max_page_count`` gives the same SQLITE_FULL."""
    conn = sqlite3.connect(tmp_path / "tiny.db")
    try:
        conn.execute("CREATE TABLE t (x BLOB)")
        conn.execute("PRAGMA max_page_count = 4")
        with pytest.raises(sqlite3.OperationalError) as raised:
            for _ in range(10):
                conn.execute("INSERT INTO t VALUES (zeroblob(4000))")
        return raised.value
    finally:
        conn.close()


def test_sqlite_full_is_a_storage_fault_of_kind_disk_full(tmp_path: Path) -> None:
    """SQLITE_FULL, raw or wrapped by SQLAlchemy, becomes StorageUnavailableError("disk full")."""
    raw = _full_sqlite_error(tmp_path)
    assert "full" in str(raw)
    for exc in (raw, OperationalError("INSERT ...", {}, raw)):
        fault = storage_unavailable(exc)
        assert isinstance(fault, StorageUnavailableError)
        assert fault.kind == "disk full"
        assert fault.retry_after >= 1
        assert "INSERT" not in str(fault)  # the statement is not shown to clients


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (psycopg.errors.DiskFull("could not extend file"), "disk full"),
        (psycopg.errors.TooManyConnections("sorry, too many clients already"), "too many connections"),
        (psycopg.errors.AdminShutdown("terminating connection"), "connection lost"),
        (psycopg.OperationalError("connection refused"), "connection lost"),
    ],
)
def test_postgresql_faults_are_storage_faults(exc: Exception, kind: str) -> None:
    """PostgreSQL's disk full, too many clients, a terminated backend and a refused connection."""
    fault = storage_unavailable(exc)
    assert fault is not None and fault.kind == kind


@pytest.mark.parametrize(
    "exc",
    [
        sqlite3.IntegrityError("UNIQUE constraint failed"),
        sqlite3.OperationalError("no such table: x"),
        psycopg.errors.UniqueViolation("duplicate key"),
        ValueError("x"),
    ],
)
def test_other_errors_are_not_storage_faults(exc: Exception) -> None:
    """Constraint violations, a bad statement or a plain bug are left alone (they are not 503s)."""
    assert storage_unavailable(exc) is None


def test_the_failure_log_writes_one_line_per_kind_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    """1,000 failures of one kind and 3 of another within the interval: two lines; the next says how many."""
    log = FailureLog(logging.getLogger("test.failures"), interval=3600)
    with caplog.at_level(logging.WARNING, "test.failures"):
        for _ in range(1000):
            log.record("disk full", "SQLITE_FULL")
        for _ in range(3):
            log.record("connection lost", "refused")
        assert len(caplog.records) == 2
        log.interval = 0
        log.record("disk full", "SQLITE_FULL")
    assert len(caplog.records) == 3
    assert "999 more" in caplog.records[-1].getMessage()


def test_a_storage_fault_on_a_read_route_answers_503_json(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that meets a lost database answers 503 + Retry-After with a JSON body, not a 500."""
    ledger: Any = api.client.app.state.ledger  # type: ignore[attr-defined]

    async def lost(*_: object, **__: object) -> None:
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(ledger, "player_history_async", lost)  # the history route's read
    assert api.post(single("h-1")).status_code == 201
    r = api.get("/v1/players/alice/history")
    assert r.status_code == 503, r.text
    assert r.headers["content-type"] == "application/json"
    assert int(r.headers["retry-after"]) >= 1
    assert "connection lost" in r.json()["detail"]


def test_a_storage_fault_in_the_key_check_of_the_direct_route_answers_503(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The direct write route's key lookup meeting a full disk answers 503 JSON; nothing is stored."""
    from sedma_elo.service.auth import keys

    def full(*_: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(keys, "find_key", full)
    r = api.post(single("g-1"), key="sk_" + "Zq3" * 10 + "x9_-AbC")
    assert r.status_code == 503, r.text
    assert r.json()["detail"].startswith("the database is unavailable (disk full)")
    monkeypatch.undo()
    assert api.get("/v1/matches/g-1").status_code == 404


# ---------------------------------------------------------------------------- a real full disk
@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs mounted for this test (skipped, saying why, where it cannot be mounted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip(
            "a full disk needs a small tmpfs, and mounting one needs root (run as root to include it)"
        )
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(path: Path) -> None:
    """Write ``path`` until the file system is full."""
    with path.open("wb", buffering=0) as f:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


def test_a_full_disk_answers_503_json_loses_nothing_and_recovers(
    small_disk: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite on a full tmpfs: 503s (JSON, Retry-After), one log line; once freed, every match lands once."""
    bodies = [single(f"full-{i}", a=f"p{i % 5}", b=f"q{i % 3}") for i in range(200)]
    # A log of its own: an earlier test's fault of the same kind must not silence this one's line.
    monkeypatch.setattr(faults, "FAILURES", FailureLog(logging.getLogger(faults.FAILURES.logger.name)))
    for api in make_api(f"sqlite:///{small_disk}/ledger.db"):
        filler = small_disk / "filler"
        _fill(filler)
        answers: dict[int, Any] = {}
        refused: list[Any] = []
        with caplog.at_level(logging.WARNING, "sedma_elo.service.faults"):
            for i, body in enumerate(bodies):
                r = api.post(body)
                if r.status_code in (200, 201):
                    answers[i] = r.json()
                else:
                    refused.append(r)
                if len(refused) >= 20:
                    break
        assert len(refused) == 20, "the disk never filled up"
        for r in refused:
            assert r.status_code == 503, r.text
            assert r.headers["content-type"] == "application/json"
            assert int(r.headers["retry-after"]) >= 1
            assert "disk full" in r.json()["detail"]
        lines = [rec for rec in caplog.records if rec.name == "sedma_elo.service.faults"]
        assert 1 <= len(lines) <= 2, [rec.getMessage() for rec in lines]  # not one per request
        assert all(rec.exc_info is None for rec in lines)  # no traceback
        assert api.get("/v1/leaderboard").status_code == 200  # reads still answer

        filler.unlink()
        for i, body in enumerate(bodies):
            r = api.post(body)
            if i in answers:
                assert (r.status_code, r.json()) == (200, answers[i]), i  # stored once, as answered
            else:
                assert r.status_code == 201, (i, r.text)
        assert api.get("/healthz").json()["ledger_size"] == len(bodies)
        ledger: Any = api.client.app.state.ledger  # type: ignore[attr-defined]
        assert ledger.verify().ok
