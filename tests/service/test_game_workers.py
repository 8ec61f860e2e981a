"""Game analysis in separate ``sedma-elo worker`` processes: kill -9 mid-analysis loses nothing.

A worker killed while it holds a game leaves the game ``analysing`` under a lease; once the lease
runs out the next worker analyses it again, and the ledger's exactly-once rule applies every game's
match once. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

import pytest
from games_helpers import analysed_match, bot_record, expected_ratings, game_body
from server import SEDMA_ELO, Server

from sedma_elo.service.games import GameIn, GameStore, check_game
from sedma_elo.service.ledger import Ledger
from sedma_elo.storage import open_database

_LEASE = "2"


def _worker(url: str) -> subprocess.Popen[bytes]:
    # Its log goes to this test's stderr (pytest shows it when the test fails).
    return subprocess.Popen(
        [SEDMA_ELO, "worker", "--database-url", url, "--lease", _LEASE, "--poll", "0.05"],
        stdout=subprocess.DEVNULL,
    )


def _wait(condition: Callable[[], bool], seconds: float, poll: float = 0.005) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {seconds} s")
        time.sleep(poll)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_kill_9_mid_analysis_then_restart_applies_every_game_once(db_url: str) -> None:
    """SIGKILL while a game is being analysed; a new worker finishes all; ledger = rate() of each analysis."""
    db = open_database(db_url)
    ledger = Ledger(db, async_connections=1)
    ledger.ensure_version()
    store = GameStore(db)
    pairs = [("ann", "ben"), ("ben", "cid"), ("cid", "ann"), ("ann", "dot")]
    records = {f"k-{i}": bot_record(40 + i, pair) for i, pair in enumerate(pairs)}
    for match_id, record in records.items():
        store.submit(check_game(GameIn.model_validate(game_body(match_id, record))))
    first = _worker(db_url)
    try:
        _wait(lambda: any(store.get(m).status == "analysing" for m in records), 300)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    held = [m for m in records if store.get(m).status == "analysing"]
    assert len(held) == 1  # killed while holding one game
    second = _worker(db_url)
    try:
        _wait(lambda: store.backlog() == 0, 300, poll=0.1)
    finally:
        _stop(second)
    assert {store.get(m).status for m in records} == {"applied"}
    assert store.get(held[0]).attempts == 2
    assert ledger.ledger_size() == len(records)
    assert ledger.verify().ok
    order = sorted(records, key=lambda m: ledger.get_match(m)["sequence"])
    expected = expected_ratings([analysed_match(m, records[m]) for m in order])
    assert {p: ledger.get_player(p).rating for p in expected} == expected
    if db.dialect == "postgresql":  # procrastinate's jobs: each succeeded; the killed one was put back once
        assert db.query("SELECT lock, status FROM procrastinate_jobs ORDER BY lock") == [
            (m, "succeeded") for m in sorted(records)
        ]
        starts = db.query(
            "SELECT count(*) FROM procrastinate_events e JOIN procrastinate_jobs j ON j.id = e.job_id"
            " WHERE e.type = 'started' AND j.lock = ?",
            (held[0],),
        )
        assert starts == [(2,)]
    db.dispose()


@pytest.mark.slow
def test_a_game_posted_over_http_is_applied_by_a_separate_worker(db_url: str) -> None:
    """POST /v1/games to the app, a `sedma-elo worker` process analyses it: the ratings rate() gives."""
    from fastapi.testclient import TestClient

    from sedma_elo.service import ServiceSettings, create_app
    from sedma_elo.service.auth import create_key

    db = open_database(db_url)
    key, _ = create_key(db, "games", "game server")
    db.dispose()
    record = bot_record(50, ("eve", "fin"))
    with TestClient(create_app(ServiceSettings(database_url=db_url))) as client:
        posted = client.post(
            "/v1/games", json=game_body("h-1", record), headers={"Authorization": f"Bearer {key}"}
        )
        assert posted.status_code == 202
        worker = _worker(db_url)
        try:
            _wait(lambda: client.get("/v1/games/h-1").json()["status"] == "applied", 300, poll=0.1)
        finally:
            _stop(worker)
        view = client.get("/v1/games/h-1").json()
    expected = expected_ratings([analysed_match("h-1", record)])
    assert {c["player_id"]: c["rating_after"] for c in view["changes"]} == expected


def test_worker_refuses_a_missing_sqlite_file(tmp_path: object) -> None:
    """`sedma-elo worker` on a SQLite file that does not exist: exit 2, nothing created."""
    path = f"{tmp_path}/none.db"
    done = subprocess.run(
        [SEDMA_ELO, "worker", "--database-url", f"sqlite:///{path}"], capture_output=True, timeout=60
    )
    assert done.returncode == 2 and b"no SQLite database" in done.stderr
    assert not os.path.exists(path)


def _http(
    method: str, url: str, body: object = None, key: str | None = None
) -> tuple[int, dict[str, object]]:
    import json
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _children(pid: int) -> set[int]:
    """The live game workers among the child processes of ``pid`` (forked by any of its threads):
    not the writer process and its resource tracker, which ``multiprocessing`` starts."""
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found.update(int(c) for c in f.read().split())
    return {child for child in found if b"multiprocessing" not in _cmdline(child)}


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:  # ended meanwhile
        return b"multiprocessing"


@pytest.mark.slow
def test_serve_resumes_queued_games_after_a_restart_and_restarts_a_killed_worker(tmp_path: object) -> None:
    """A game queued under --game-workers 0 is applied after a restart; a killed worker is replaced."""
    from sedma_elo.service.auth import create_key

    url = f"sqlite:///{tmp_path}/serve.db"
    db = open_database(url)
    key, _ = create_key(db, "games", "game server")
    db.dispose()
    records = {"s-1": bot_record(60, ("gil", "hal")), "s-2": bot_record(61, ("hal", "ivy"))}
    server = Server(url, "--game-workers", "0")
    try:
        assert _http("POST", f"{server.base}/v1/games", game_body("s-1", records["s-1"]), key)[0] == 202
        time.sleep(1)
        assert _http("GET", f"{server.base}/v1/games/s-1")[1]["status"] == "queued"
    finally:
        server.stop()
    server = Server(url, "--game-workers", "1")
    try:
        _wait(lambda: _http("GET", f"{server.base}/v1/games/s-1")[1]["status"] == "applied", 300, poll=0.2)
        (first,) = _children(server.proc.pid)
        os.kill(first, signal.SIGKILL)
        _wait(lambda: len(_children(server.proc.pid) - {first}) == 1, 60, poll=0.1)
        assert _http("POST", f"{server.base}/v1/games", game_body("s-2", records["s-2"]), key)[0] == 202
        _wait(lambda: _http("GET", f"{server.base}/v1/games/s-2")[1]["status"] == "applied", 300, poll=0.2)
        views = [_http("GET", f"{server.base}/v1/games/{m}")[1] for m in records]
    finally:
        _, err = server.stop()
    assert "died (signal 9)" in err
    expected = expected_ratings([analysed_match(m, r) for m, r in records.items()])
    got = {c["player_id"]: c["rating_after"] for v in views for c in v["changes"]}  # type: ignore[attr-defined]
    assert got == expected


def _exiting_pool(code: int, restarts: int, backoff_base: float, backoff_max: float) -> None:
    """Run a supervised pool of one process that exits with ``code`` until it was restarted
    ``restarts`` times, then stop it (what it logged is in ``caplog``)."""
    import sys

    from sedma_elo.service.games.worker import WorkerProcesses

    class Exiting(WorkerProcesses):
        def _spawn(self) -> subprocess.Popen[bytes]:
            return subprocess.Popen([sys.executable, "-S", "-c", f"raise SystemExit({code})"])

    pool = Exiting("sqlite://", 1, backoff_base=backoff_base, backoff_max=backoff_max, check=0.01).start()
    try:
        _wait(lambda: pool.restarts >= restarts, 60, poll=0.01)
    finally:
        pool.stop()


def test_a_worker_that_keeps_dying_is_restarted_after_growing_bounded_delays(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each exit is logged with its code; the delays double from the base up to the cap."""
    import logging
    import re

    caplog.set_level(logging.WARNING, "sedma_elo.service.games")
    _exiting_pool(3, restarts=4, backoff_base=0.1, backoff_max=0.4)
    lines = [r.getMessage() for r in caplog.records if "died" in r.getMessage()]
    assert all("(exit code 3)" in line for line in lines)
    delays = [float(m.group(1)) for line in lines if (m := re.search(r"restarting it in ([0-9.]+) s", line))]
    assert delays[:4] == [0.1, 0.2, 0.4, 0.4]


def test_a_worker_that_exits_cleanly_is_logged_as_stopped_not_died(caplog: pytest.LogCaptureFixture) -> None:
    """Exit code 0 (asked to stop from outside) is logged at INFO as "stopped", not as a death."""
    import logging

    caplog.set_level(logging.INFO, "sedma_elo.service.games")
    _exiting_pool(0, restarts=1, backoff_base=0.05, backoff_max=0.05)
    exits = [r for r in caplog.records if "(exit code 0)" in r.getMessage()]
    assert exits and all(r.levelno == logging.INFO and " stopped " in r.getMessage() for r in exits)


def test_a_terminal_ctrl_c_reaches_serve_alone_not_its_workers(tmp_path: object) -> None:
    """Workers have a process group of their own: a Ctrl-C (SIGINT to the group) reaches serve alone."""
    url = f"sqlite:///{tmp_path}/ctrl-c.db"
    open_database(url).dispose()
    server = Server(url, "--game-workers", "1")
    try:
        _wait(lambda: len(_children(server.proc.pid)) == 1, 60, poll=0.1)
        (worker,) = _children(server.proc.pid)
        assert os.getpgid(worker) != os.getpgid(server.proc.pid)
        os.killpg(server.proc.pid, signal.SIGINT)
        server.proc.wait(timeout=60)
        _wait(lambda: not os.path.exists(f"/proc/{worker}"), 30, poll=0.1)
    finally:
        _, err = server.stop()
    assert "died" not in err
