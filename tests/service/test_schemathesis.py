"""Schemathesis drives a real server from its OpenAPI schema: no request may cause a 500, and every
check of ``st run --checks all`` passes (with the narrow exceptions of schemathesis.toml)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from server import Server

from needs import reset_pg
from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database

ST = str(Path(sys.executable).with_name("st"))
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def running(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, str]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('fuzz')}/fuzz.db"
    else:
        url = request.getfixturevalue("pg_database")
        reset_pg(url)
    db = open_database(url)
    key, _ = create_key(db, "admin", "fuzz")
    db.dispose()
    # Fuzzed subscriptions may name any host: nothing may be sent beyond this machine.
    server = Server(url, SEDMA_ELO_WEBHOOKS="false")
    try:
        yield server, key
    finally:
        server.stop()


@pytest.mark.slow
def test_every_check_passes(running: tuple[Server, str], tmp_path: Path) -> None:
    """``st run --checks all`` (examples, coverage, fuzzing and stateful phases) finds no failure.

    Its checks include ``not_a_server_error``: no request the schema allows, or breaks, gets a 5xx.
    """
    server, key = running
    examples = os.environ.get("SEDMA_ELO_FUZZ_EXAMPLES", "5")
    command = [ST, "--config-file", str(CONFIG), "--no-color", "run", f"{server.base}/openapi.json"]
    command += ["--checks", "all", "-H", f"Authorization: Bearer {key}", "-n", examples]
    command += ["--generation-deterministic"]  # the same cases on every run: a failure is reproducible
    # In tmp_path: st keeps a cache of its runs in ./.schemathesis.
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
