"""The writer process (``writer_process``, what ``serve`` runs): the same answers as a writer thread,
errors across the pipe, fresh reads, a dead writer process replaced, a stop that answers everything."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conftest import Api, make_api, single
from sedma_elo import Match
from sedma_elo.service import Ledger, submission_from_match
from sedma_elo.service.writer_process import ProcessWriter, WriterConfig
from sedma_elo.storage import open_database


def _with_stats(body: dict[str, Any], **stats: Any) -> dict[str, Any]:
    return {**body, "stats": stats}


def _bodies() -> list[dict[str, Any]]:
    """New matches of both forms, a draw, a repeat and a conflict."""
    team = {
        "match_id": "t-1",
        "played_at": "2026-11-29T13:00:00Z",
        "team_a": ["ann", "cid"],
        "team_b": ["bob", "dan"],
        "winner": "draw",
        "stats": {"cid": {"won_by_16": 1}, "bob": {"bad_moves": 2}},
    }
    return [
        _with_stats(single("m-1", "ann", "bob", "a"), a={"won_by_16": 1}, b={"bad_moves": 3}),
        single("m-2", "bob", "cid", "b"),
        team,
        _with_stats(single("m-1", "ann", "bob", "a"), a={"won_by_16": 1}, b={"bad_moves": 3}),  # repeat: 200
        single("m-2", "bob", "cid", "a"),  # another body under a used id: 409
        single("m-3", "dan", "ann", "draw"),
    ]


def _answers(api: Api) -> list[tuple[int, Any]]:
    return [(r.status_code, r.json()) for r in (api.post(body) for body in _bodies())]


@pytest.fixture
def second_url(db_url: str, tmp_path: Any, new_pg_database: Callable[[], str]) -> str:
    """A second empty database of the same kind as ``db_url``."""
    if db_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path}/second.db"
    return new_pg_database()


def test_answers_equal_those_of_a_writer_thread(db_url: str, second_url: str) -> None:
    """Each status and JSON answer of the writer process equals the writer thread's, byte for byte."""
    for thread_api in make_api(db_url, writer_process=False):
        threaded = _answers(thread_api)
    for process_api in make_api(second_url, writer_process=True):
        assert type(process_api.client.app.state.services.writer) is ProcessWriter
        separate = _answers(process_api)
    assert [status for status, _ in separate] == [201, 201, 201, 200, 409, 201]
    assert separate == threaded


@pytest.fixture
def process_api(tmp_path: Any) -> Iterator[Api]:
    """The app on a new SQLite file, writing through a writer process."""
    yield from make_api(f"sqlite:///{tmp_path}/ledger.db", writer_process=True)


def test_a_conflict_crosses_the_pipe_as_409(process_api: Api) -> None:
    """The writer process's ConflictError reaches the client as a 409 that names the match id."""
    assert process_api.post(single("x-1", "ann", "bob", "a")).status_code == 201
    refused = process_api.post(single("x-1", "ann", "bob", "b"))
    assert refused.status_code == 409
    assert "x-1" in refused.json()["detail"]


def test_a_player_read_after_a_write_sees_it(process_api: Api) -> None:
    """The read cache of the API process is fresh for a write the writer process committed."""
    assert process_api.post(single("r-1", "ann", "bob", "a")).status_code == 201
    before = process_api.get("/v1/players/ann").json()
    assert process_api.post(single("r-2", "ann", "bob", "a")).status_code == 201
    after = process_api.get("/v1/players/ann").json()
    assert after["matches_played"] == before["matches_played"] + 1
    assert after["rating"] > before["rating"]


def _restarts(api: Api) -> float:
    """The writer restarts counted in GET /metrics."""
    for line in api.get("/metrics").text.splitlines():
        if line.startswith("sedma_elo_writer_restarts_total "):
            return float(line.split()[1])
    raise AssertionError("no sedma_elo_writer_restarts_total in /metrics")


def test_a_dead_writer_process_is_replaced(process_api: Api) -> None:
    """A killed writer process is started again; the writes after it are applied."""
    writer = process_api.client.app.state.services.writer
    assert process_api.post(single("d-1", "ann", "bob", "a")).status_code == 201
    restarts_before = _restarts(process_api)
    os.kill(writer._process.pid, signal.SIGKILL)
    deadline = time.monotonic() + 120
    statuses = []
    while time.monotonic() < deadline:
        status = process_api.post(single("d-2", "ann", "bob", "b")).status_code
        statuses.append(status)
        if status in (200, 201):
            break
        time.sleep(0.2)
    assert statuses[-1] in (200, 201)
    assert set(statuses[:-1]) <= {503}  # while it restarts: retry later, never a 500
    assert writer.restarts == 1
    assert _restarts(process_api) == restarts_before + 1
    assert process_api.get("/v1/players/ann").json()["matches_played"] == 2


def test_stop_answers_every_submission_it_was_handed(tmp_path: Any) -> None:
    """Submissions handed over before stop() are all applied and answered."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    writer = ProcessWriter(WriterConfig(url, max_batch=7), ledger)
    writer.start()
    matches = [Match.single(f"p{i}", f"p{i + 1}", "a", match_id=f"s-{i}") for i in range(60)]
    futures = [writer.submit_nowait(submission_from_match(m)) for m in matches]
    writer.stop()
    assert [f.result(timeout=0).status for f in futures] == ["created"] * 60
    assert writer.applied == 60
    assert writer.batches >= 60 // 7
    assert ledger.verify().ok
    db.dispose()
