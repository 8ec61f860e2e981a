"""Fixtures shared by every test folder."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator

import psycopg
import pytest

#: The machine's PostgreSQL (trust auth), used only to create and drop test databases.
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture
def new_pg_database() -> Iterator[Callable[[str], str]]:
    """``new_pg_database(options="")``: the URL of a fresh PostgreSQL database, dropped after the test.

    ``options`` is appended to ``CREATE DATABASE`` (a template, a locale provider...).
    """
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
