"""What some tests need from the machine (Mono, Chromium, PostgreSQL), checked one way.

A missing tool fails the test under ``CI=true`` (``make test`` installs Mono and Chromium, and CI
provides PostgreSQL, so missing there is a broken setup) and skips it elsewhere, with the reason.
"""

from __future__ import annotations

import os
from functools import cache
from typing import NoReturn

import psycopg
import pytest

#: The machine's PostgreSQL (trust auth), used only to create and drop test databases.
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


def in_ci() -> bool:
    """True when ``CI=true`` is set (any case)."""
    return os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> NoReturn:
    """Fail under ``CI=true``, skip elsewhere; ``reason`` says what is missing and how to get it."""
    if in_ci():
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@cache
def _postgres_problem() -> str | None:
    try:
        psycopg.connect(PG_ADMIN, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        return f"PostgreSQL is not reachable at 127.0.0.1:5432 ({str(exc).strip().splitlines()[0]})"
    return None


def require_postgres() -> None:
    """Fail (CI) or skip the test when the PostgreSQL server of the tests is not reachable."""
    problem = _postgres_problem()
    if problem is not None:
        unavailable(problem)
