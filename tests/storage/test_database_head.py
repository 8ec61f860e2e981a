"""Opening a database already at the newest migration: no Alembic (storage.migrate.upgrade)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa
from alembic.config import Config
from alembic.script import ScriptDirectory

from sedma_elo.storage import downgrade, migrate, open_database

SRC = Path(__file__).resolve().parents[2] / "src"

_CHILD = """
import sys
from sedma_elo.storage import open_database
db = open_database(sys.argv[1])
with db.read.connect() as conn:
    tables = conn.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE name = 'matches'").scalar()
db.dispose()
print(tables, "alembic" in sys.modules)
"""


def _open_in_child(url: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, url], env=env, capture_output=True, text=True, check=True, timeout=300
    )
    return done.stdout.strip()


def test_the_newest_revision_is_alembics_head() -> None:
    """The newest migration file's revision is the head of Alembic's own graph."""
    cfg = Config()
    cfg.set_main_option("script_location", str(SRC / "sedma_elo" / "storage" / "migrations"))
    cfg.set_main_option("path_separator", "os")
    assert migrate._newest_revision() == ScriptDirectory.from_config(cfg).get_current_head()


def test_a_database_at_the_head_opens_without_alembic(tmp_path: Path) -> None:
    """A process opening an up-to-date ledger does not import Alembic; one a migration behind does."""
    url = f"sqlite:///{tmp_path}/a.db"
    open_database(url).dispose()
    assert _open_in_child(url) == "1 False"
    db = open_database(url, migrate=False)
    try:
        downgrade(db, "-1")
        with db.read.connect() as conn:
            behind = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        db.dispose()
    assert behind != migrate._newest_revision()
    assert _open_in_child(url) == "1 True"
    db = open_database(url, migrate=False)
    try:
        assert migrate._at_revision(db) == migrate._newest_revision()
    finally:
        db.dispose()
