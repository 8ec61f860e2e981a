"""The bundled Alembic migrations: which revision a database is at, and moving it up or down.

A database whose revision is not one of this release's (a newer release upgraded it) is refused
with a :class:`~sedma_elo.errors.DatabaseError` that says so, instead of Alembic's traceback: the
rollback of a release meets it (docs/service.md, "Upgrades and rollbacks").
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import inspect, text
from sqlalchemy.engine import make_url

from ..errors import DatabaseError, ValidationError

if TYPE_CHECKING:
    from .database import Database

__all__ = ["bundled_revisions", "downgrade", "upgrade"]

_MIGRATIONS = Path(__file__).with_name("migrations")
_REVISION = re.compile(r'^revision = "([^"]+)"$', re.MULTILINE)


def _alembic_config() -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("path_separator", "os")
    return cfg


def _newest_revision() -> str | None:
    """The revision of the newest bundled migration (the last of :func:`bundled_revisions`)."""
    known = bundled_revisions()
    return known[-1] if known else None


def _at_revision(db: Database) -> str | None:
    """The revision the database is at (Alembic's one row), or None (no such table or row)."""
    with db.read.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        rows = conn.execute(text("SELECT version_num FROM alembic_version")).fetchall()
    return str(rows[0][0]) if len(rows) == 1 else None


def upgrade(db: Database, revision: str = "head") -> None:
    """Run the bundled Alembic migrations up to ``revision`` (idempotent).

    A database already at the newest migration is left as it is without loading Alembic and the
    migrations (about 10 MB of a process: ``verify``'s memory, each command's start).

    Raises:
        DatabaseError: the database is at a revision this release does not have (a newer
            release's; see :func:`_refuse_unknown`).
    """
    newest = _newest_revision()
    at = _at_revision(db)
    if revision == "head" and newest is not None and at == newest:
        return
    _refuse_unknown(db, at)
    from alembic import command

    cfg = _alembic_config()
    with db.begin_write() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def downgrade(db: Database, revision: str) -> None:
    """Undo the bundled migrations down to ``revision`` (``"base"``: drop every table). Data is lost.

    Raises:
        DatabaseError: the database is at a revision this release does not have.
        ValidationError: ``revision`` is none of this release's, nor ``"base"`` or ``-N``, or is
            newer than the database's (field ``revision``).
    """
    at = _at_revision(db)
    _refuse_unknown(db, at)
    known = bundled_revisions()
    if revision != "base" and revision not in known and not re.fullmatch(r"-\d+", revision):
        why = f"unknown revision {revision!r} (this release has: {', '.join(known)}, or base)"
        raise ValidationError("revision", why)
    if revision in known and (at is None or known.index(revision) > known.index(at)):
        raise ValidationError("revision", f"{revision!r} is not below the database's revision {at!r}")
    from alembic import command

    cfg = _alembic_config()
    with db.begin_write() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)


@lru_cache(maxsize=1)
def bundled_revisions() -> tuple[str, ...]:
    """The revisions of this release's migrations, oldest first (the chain is linear)."""
    files = sorted((_MIGRATIONS / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"))
    return tuple(m.group(1) for m in (_REVISION.search(f.read_text()) for f in files) if m)


def _refuse_unknown(db: Database, at: str | None) -> None:
    """Raise if ``at``, the database's revision, is not one of this release's.

    Raises:
        DatabaseError: a newer release upgraded the database (names both revisions and what to do).
    """
    if at is None or at in bundled_revisions():
        return
    newest = bundled_revisions()[-1]
    shown = make_url(db.url).render_as_string(hide_password=True)
    raise DatabaseError(
        f"database {shown}: its schema is at revision {at!r}, which this release of sedma-elo does"
        f" not know (its newest is {newest!r}): a newer release upgraded it. Run that release, or"
        f" roll the schema back with that release first: `sedma-elo db downgrade {newest} --yes`"
    )
