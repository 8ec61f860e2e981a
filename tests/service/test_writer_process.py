"""The writer process (``writer_process``, what ``serve`` runs): the same answers as a writer thread,
errors across the pipe, fresh reads, a dead writer process replaced, a stop that answers everything."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import multiprocessing
import os
import signal
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from server import Server

from conftest import Api, make_api, single
from needs import reset_pg
from sedma_elo import Match
from sedma_elo.errors import UnavailableError
from sedma_elo.service import Ledger, ServiceSettings, submission_from_match
from sedma_elo.service.app import writer_config
from sedma_elo.service.auth import create_key
from sedma_elo.service.payload import Submission
from sedma_elo.service.writer_process import ProcessWriter, SharedWriter, WriterConfig
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


def test_the_preference_crosses_the_pipe(process_api: Api) -> None:
    """A ``Prefer: return=minimal`` write through the writer process answers the summary."""
    headers = process_api.headers(process_api.write_key)
    minimal = process_api.client.post(
        "/v1/matches", json=single("s-1"), headers=headers | {"Prefer": "return=minimal"}
    )
    assert minimal.status_code == 201 and "explanation" not in minimal.text
    full = process_api.client.post("/v1/matches", json=single("s-1"), headers=headers)
    assert full.status_code == 200 and "explanation" in full.text
    assert json.loads(minimal.text)["changes"] == [
        {k: c[k] for k in ("player_id", "rating_before", "rating_after", "delta")}
        for c in full.json()["changes"]
    ]


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


@pytest.mark.skipif(len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2, reason="needs 2 CPUs (Linux)")
def test_the_writer_process_runs_on_its_cpus(tmp_path: Any) -> None:
    """A writer process given CPUs runs on those, not on all of its parent's, and still applies."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    db = open_database(url)
    ledger = Ledger(db)
    ledger.ensure_version()
    cpu = max(os.sched_getaffinity(0))
    writer = ProcessWriter(WriterConfig(url, cpus=frozenset({cpu})), ledger)
    writer.start()
    try:
        assert writer._process is not None and writer._process.pid is not None
        assert os.sched_getaffinity(writer._process.pid) == {cpu}
        future = writer.submit_nowait(submission_from_match(Match.single("p1", "p2", "a", match_id="c-1")))
    finally:
        writer.stop()  # answers what it was handed first
        db.dispose()
    assert future.result(timeout=0).status == "created"


def test_serve_settings_give_the_writer_process_its_cpus(tmp_path: Any) -> None:
    """WRITER_CPUS reaches the writer process's configuration; unset, it runs where it is started."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    pinned = writer_config(ServiceSettings(database_url=url, writer_process=True, writer_cpus="0"))
    free = writer_config(ServiceSettings(database_url=url, writer_process=True))
    assert pinned is not None and pinned.cpus == {0}
    assert free is not None and free.cpus is None


@pytest.fixture
def shared(tmp_path: Any) -> Iterator[tuple[SharedWriter, str]]:
    """A shared writer process (what ``serve --workers N`` starts) on a new SQLite file."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    db = open_database(url)
    Ledger(db).ensure_version()
    db.dispose()
    writer = SharedWriter(WriterConfig(url, max_batch=16))
    writer.start()
    yield writer, url
    writer.stop()


def _client(shared: SharedWriter, url: str) -> tuple[ProcessWriter, Ledger]:
    ledger = Ledger(open_database(url))
    client = ProcessWriter(WriterConfig(url), ledger, shared=(shared.address, shared.authkey))
    client.start()
    return client, ledger


def test_two_api_processes_share_one_writer_process(shared: tuple[SharedWriter, str]) -> None:
    """Submissions of two clients are all applied, in batches that mix both, by one writer process."""
    writer, url = shared
    (one, ledger), (two, _) = _client(writer, url), _client(writer, url)
    subs = [
        submission_from_match(Match.single(f"p{i}", f"p{i + 1}", "a", match_id=f"w-{i}")) for i in range(80)
    ]
    futures = [(one if i % 2 else two).submit_nowait(sub) for i, sub in enumerate(subs)]
    one.stop()
    two.stop()
    assert [f.result(timeout=0).status for f in futures] == ["created"] * 80
    assert one.applied + two.applied == 80
    assert ledger.verify().ok
    assert len(ledger.versions()) == 1


def test_a_client_without_the_key_is_refused(shared: tuple[SharedWriter, str]) -> None:
    """A connection with another key gets no writer; the writer goes on serving the others."""
    writer, url = shared
    stranger = ProcessWriter(
        WriterConfig(url), Ledger(open_database(url)), shared=(writer.address, b"x" * 32)
    )
    with pytest.raises(multiprocessing.AuthenticationError):
        stranger.start()
    client, _ = _client(writer, url)
    future = client.submit_nowait(submission_from_match(Match.single("ann", "bob", "a", match_id="k-1")))
    client.stop()
    assert future.result(timeout=0).status == "created"


def test_a_dead_shared_writer_is_started_again_and_found(shared: tuple[SharedWriter, str]) -> None:
    """serve's watch starts a killed shared writer again; its clients connect to the new one."""
    writer, url = shared
    client, ledger = _client(writer, url)
    assert client.submit_nowait(submission_from_match(Match.single("a", "b", "a", match_id="z-1"))).result(30)
    os.kill(writer._process.pid, signal.SIGKILL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            outcome = client.submit_nowait(
                submission_from_match(Match.single("a", "b", "b", match_id="z-2"))
            ).result(30)
        except Exception:  # 503 while the writer starts again
            time.sleep(0.2)
            continue
        break
    client.stop()
    assert outcome.status in ("created", "repeat")
    assert writer.restarts == 1 and client.restarts == 1
    assert ledger.get_player("a").matches_played == 2


def _spawned(pid: int) -> int:
    """How many children of ``pid`` multiprocessing's spawn started (API workers, writer process)."""
    count = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            for child in f.read().split():
                with contextlib.suppress(OSError), open(f"/proc/{child}/cmdline", "rb") as cmd:
                    count += b"spawn_main" in cmd.read()
    return count


@pytest.mark.slow
def test_serve_with_two_workers_runs_one_writer_process(tmp_path: Any) -> None:
    """serve --workers 2 starts one writer process and its API process writes through it, not a
    writer process of its own (the harness serves the app in serve's own process: no workers)."""
    url = f"sqlite:///{tmp_path}/served.db"
    db = open_database(url)
    key, _ = create_key(db, "write", "tests")
    db.dispose()
    server = Server(url, "--workers", "2", "--game-workers", "0")
    try:
        statuses = []
        for i in range(30):  # a connection each: the kernel spreads them over both workers
            body = json.dumps(single(f"s-{i}", f"p{i}", f"p{i + 1}", "a")).encode()
            request = urllib.request.Request(
                f"{server.base}/v1/matches",
                body,
                {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as answer:
                statuses.append(answer.status)
        assert statuses == [201] * 30
        assert _spawned(server.proc.pid) == 1  # serve's shared writer; an own one would make 2
    finally:
        _, err = server.stop()
    assert "Traceback" not in err
    ledger = Ledger(open_database(url))
    assert ledger.verify().ok
    ledger.db.dispose()


def test_readyz_is_503_while_the_writer_process_starts_again(
    process_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/readyz answers 503 from a writer process's death until its successor is connected."""
    writer = process_api.client.app.state.services.writer
    assert process_api.get("/readyz").status_code == 200
    release = threading.Event()
    spawn = ProcessWriter._spawn

    def held_spawn(self: ProcessWriter) -> Any:
        release.wait(60)  # the successor starts only when the test says so
        return spawn(self)

    monkeypatch.setattr(ProcessWriter, "_spawn", held_spawn)
    os.kill(writer._process.pid, signal.SIGKILL)
    _until(lambda: process_api.get("/readyz").status_code == 503)
    assert "writer" in process_api.get("/readyz").json()["detail"]
    release.set()
    _until(lambda: process_api.get("/readyz").status_code == 200)


def _until(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


def _single(match_id: str, a: str, b: str) -> Submission:
    return submission_from_match(Match.single(a, b, "a", match_id=match_id))


def test_a_timed_out_write_still_in_the_backlog_is_withdrawn(tmp_path: Any) -> None:
    """A request that timed out while its match waited in the writer process's backlog gets 503,
    and the match is not applied later (the one being applied then may still commit)."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    ledger = Ledger(open_database(url))
    ledger.ensure_version()
    writer = ProcessWriter(WriterConfig(url), ledger, timeout=0.5)
    writer.start()
    lock = os.open(f"{tmp_path}/ledger.db-writer.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)  # the writer process's batch waits for this lock

    async def post_two() -> list[Any]:
        first = asyncio.ensure_future(writer.submit(_single("o-1", "a", "b")))
        await asyncio.sleep(0.2)  # o-1's batch has started and waits for the lock
        second = asyncio.ensure_future(writer.submit(_single("o-2", "c", "d")))
        return await asyncio.gather(first, second, return_exceptions=True)

    try:
        answers = asyncio.run(post_two())
        time.sleep(0.3)  # the withdrawal crosses the pipe
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
        writer.stop()
    assert [type(a) for a in answers] == [UnavailableError, UnavailableError]
    assert [m.match_id for _, m in ledger.ledger()] == ["o-1"]
    assert writer.waiting() == 0
    ledger.db.dispose()


@pytest.mark.postgres
def test_concurrent_batches_on_postgresql_keep_the_ledger_exact(pg_database: str) -> None:
    """Submissions arriving while batches commit, among few players, are all stored once and rated
    in order: ``verify`` replays the ledger to the stored ratings."""
    reset_pg(pg_database)
    ledger = Ledger(open_database(pg_database))
    ledger.ensure_version()
    writer = ProcessWriter(WriterConfig(pg_database, max_batch=4), ledger, timeout=30)
    writer.start()
    players = [f"q{i}" for i in range(6)]  # few players: consecutive batches share them

    async def post_all() -> list[Any]:
        subs = [_single(f"c-{i}", players[i % 6], players[(i * 5 + 1) % 6]) for i in range(80)]
        return await asyncio.gather(*(writer.submit(s) for s in subs))

    try:
        outcomes = asyncio.run(post_all())
    finally:
        writer.stop()
    assert [o.status for o in outcomes] == ["created"] * 80
    assert len(list(ledger.ledger())) == 80
    assert ledger.verify().ok
    ledger.db.dispose()
