"""What some tests need from the machine (Mono, Chromium, PostgreSQL, the shared data), checked one way.

A missing tool fails the test under ``CI=true`` (``make test`` installs Mono and Chromium, and CI
provides PostgreSQL and the project's shared folder, so missing there is a broken setup) and skips it
elsewhere, with the reason.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import NoReturn

import psycopg
import pytest

_REPO = Path(__file__).resolve().parents[1]

#: The ATP history file of the shared data folder.
ATP_FILE = "atp_1991_2017.csv.gz"

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


def shared(sub: str) -> Path | None:
    """The project's shared folder ``sub`` (seeds, golden, data): ``$SEDMA_SHARED_DIR/<sub>``, else the
    first ``shared/<sub>`` beside the repository or beside one of its parent folders (a worktree).
    ``data`` may also be given on its own as ``$SEDMA_DATA_DIR``. None when there is none."""
    candidates = []
    if sub == "data" and os.environ.get("SEDMA_DATA_DIR"):
        candidates.append(Path(os.environ["SEDMA_DATA_DIR"]))
    if os.environ.get("SEDMA_SHARED_DIR"):
        candidates.append(Path(os.environ["SEDMA_SHARED_DIR"]) / sub)
    candidates += [folder / "shared" / sub for folder in _REPO.parents]
    return next((c for c in candidates if c.is_dir()), None)


def require_shared(sub: str) -> Path:
    """The shared folder ``sub``; fail (CI) or skip the test when it is not found."""
    folder = shared(sub)
    if folder is None:
        unavailable(f"the shared folder shared/{sub} is not beside the repository (set SEDMA_SHARED_DIR)")
    return folder


def require_atp() -> Path:
    """The shared ATP history file; fail (CI) or skip the test when it is not found."""
    path = require_shared("data") / ATP_FILE
    if not path.is_file():
        unavailable(f"{ATP_FILE} is not in {path.parent} (set SEDMA_DATA_DIR or SEDMA_SHARED_DIR)")
    return path


def reset_pg(url: str) -> None:
    """Empty the PostgreSQL database at ``url`` (a SQLAlchemy URL): its public schema made anew."""
    from sedma_elo.storage import libpq_url

    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
