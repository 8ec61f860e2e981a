"""kill -9 in the middle of a stream of posts loses nothing acknowledged and applies nothing twice."""

from __future__ import annotations

import http.client
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest
from server import SEDMA_ELO, Server

from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database


def _post(base: str, key: str, body: dict[str, object]) -> tuple[int, bytes]:
    req = urllib.request.Request(
        f"{base}/v1/matches",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _body(i: int) -> dict[str, object]:
    return {
        "match_id": f"k-{i}",
        "player_a": f"p{i % 7}",
        "player_b": f"p{(i * 3 + 1) % 7 if (i * 3 + 1) % 7 != i % 7 else (i + 1) % 7}",
        "winner": "ab"[i % 2],
        "stats": {"a": {"won_by_16": i % 3}, "b": {"bad_moves": i % 4}},
    }


@pytest.mark.slow
@pytest.mark.faults
def test_kill_9_loses_nothing_acknowledged(db_url: str) -> None:
    """Four posting threads; SIGKILL after 100 acknowledgements; restart, re-post all, verify."""
    db = open_database(db_url)
    key, _ = create_key(db, "write", "crash")
    db.dispose()
    server = Server(db_url)
    acked: dict[int, bytes] = {}
    lock = threading.Lock()
    stop = threading.Event()
    total = 500

    def poster(t: int) -> None:
        for i in range(t, total, 4):
            if stop.is_set():
                return
            try:
                status, content = _post(server.base, key, _body(i))
            except (OSError, http.client.HTTPException):
                return  # the server died under us (refused, reset, cut short): unacknowledged
            if status in (200, 201):
                with lock:
                    acked[i] = content

    threads = [threading.Thread(target=poster, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    while len(acked) < 100 and any(th.is_alive() for th in threads):
        time.sleep(0.005)
    server.kill9()
    stop.set()
    for th in threads:
        th.join()
    assert 100 <= len(acked) < total

    server = Server(db_url)
    try:
        for i in range(total):
            status, content = _post(server.base, key, _body(i))
            if i in acked:
                assert (status, content) == (200, acked[i]), i  # stored once, answered as before
            else:
                assert status in (200, 201), (i, status)  # maybe applied but unacknowledged, or new
        with urllib.request.urlopen(f"{server.base}/healthz") as resp:
            assert json.loads(resp.read())["ledger_size"] == total
    finally:
        server.stop()
    verify = subprocess.run([SEDMA_ELO, "verify", "--database-url", db_url], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
