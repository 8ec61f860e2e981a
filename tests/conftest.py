"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings

from needs import PG_ADMIN, in_ci, require_postgres, reset_pg

# Under CI=true every property test draws the same examples on every run (derandomize), keeps no
# example database (a failure found once on a machine must not be replayed only there) and has no
# deadline (shared CI machines are slow at random). Elsewhere hypothesis explores as usual.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
# No deadline anywhere: a loaded machine made a 0.2 ms example take 657 ms (a flaky failure, not a bug).
settings.register_profile("dev", settings.get_profile("default"), deadline=None)
settings.load_profile("ci" if in_ci() else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# The apps that tests build in this process apply writes on a writer thread: a writer process
# costs each app a fresh interpreter (about a second). The served tests (tests/service/server.py)
# and tests/service/test_writer_process.py run the writer process that `serve` runs.
os.environ.setdefault("SEDMA_ELO_WRITER_PROCESS", "0")


@pytest.fixture
def new_pg_database() -> Iterator[Callable[[str], str]]:
    """``new_pg_database(options="")``: the URL of a fresh PostgreSQL database, dropped after the test.

    ``options`` is appended to ``CREATE DATABASE`` (a template, a locale provider...).
    """
    require_postgres()
    names: list[str] = []

    def create(options: str = "") -> str:
        name = f"sedma_elo_test_{secrets.token_hex(4)}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" {options}'.rstrip())
        names.append(name)
        return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"

    yield create
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """A database created for this test session on 127.0.0.1:5432 and dropped at its end."""
    require_postgres()
    name = f"sedma_elo_test_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database URL: a new SQLite file, or the session's PostgreSQL database emptied."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/ledger.db"
    url: str = request.getfixturevalue("pg_database")
    reset_pg(url)
    return url
