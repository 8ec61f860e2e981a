"""`sedma-elo backup` of a SQLite ledger while a real server writes: the restored copy verifies."""

from __future__ import annotations

import http.client
import shutil
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest
from server import SEDMA_ELO, Server
from test_crash import _body, _post

from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database


@pytest.mark.slow
def test_backup_under_load_restores_and_verifies(tmp_path: Path) -> None:
    """Backup while four threads post: the restored copy passes verify and holds every match acked before."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    db = open_database(url)
    key, _ = create_key(db, "write", "backup")
    db.dispose()
    server = Server(url)
    acked: set[str] = set()
    lock = threading.Lock()
    stop = threading.Event()

    def poster(t: int) -> None:
        i = t
        while not stop.is_set():
            try:
                status, _ = _post(server.base, key, _body(i))
            except (OSError, http.client.HTTPException):
                return
            if status in (200, 201):
                with lock:
                    acked.add(f"k-{i}")
            i += 4

    threads = [threading.Thread(target=poster, args=(t,)) for t in range(4)]
    try:
        for th in threads:
            th.start()
        while len(acked) < 100 and all(th.is_alive() for th in threads):
            time.sleep(0.005)
        with lock:
            before = set(acked)  # acknowledged before the backup began
        out = tmp_path / "copy.db"
        done = subprocess.run(
            [SEDMA_ELO, "backup", str(out), "--database-url", url], capture_output=True, text=True, timeout=60
        )
        with lock:
            during = len(acked) - len(before)
        while len(acked) < len(before) + during + 20 and all(th.is_alive() for th in threads):
            time.sleep(0.005)  # the server kept writing after the copy too
    finally:
        stop.set()
        for th in threads:
            th.join()
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(before) >= 100
    restored = tmp_path / "restored.db"
    shutil.copyfile(out, restored)
    with sqlite3.connect(restored) as conn:
        stored = {row[0] for row in conn.execute("SELECT match_id FROM matches")}
    conn.close()
    assert before <= stored
    assert len(stored) < len(acked)  # a snapshot taken mid-stream, not a copy made afterwards
    verify = subprocess.run(
        [SEDMA_ELO, "verify", "--database-url", f"sqlite:///{restored}"], capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{len(stored)} matches" in verify.stdout
