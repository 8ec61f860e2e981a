"""Online backup of a SQLite ledger (SQLite's backup API), safe while the service writes.

PostgreSQL is backed up with its own tools (``pg_dump`` / ``pg_restore``, ``docs/service.md``):
:func:`backup_sqlite` refuses a PostgreSQL URL with a message that says so.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import DatabaseError, ValidationError
from .urls import check_database_url, sqlite_path

__all__ = ["PG_BACKUP_HINT", "BackupReport", "backup_sqlite"]

#: What a PostgreSQL user is told to do instead.
PG_BACKUP_HINT = (
    "sedma-elo backup copies SQLite ledgers only; back up PostgreSQL with pg_dump "
    "(pg_dump --format=custom --file=OUT.dump DBNAME) and restore with pg_restore, "
    "as docs/service.md ('Backups') describes"
)


@dataclass(frozen=True, slots=True)
class BackupReport:
    """A finished backup: the file written, its size in bytes, the seconds it took."""

    path: Path
    size: int
    seconds: float


def backup_sqlite(url: str | None, out: Path, *, overwrite: bool = False) -> BackupReport:
    """Copy the SQLite ledger at ``url`` to the new file ``out``, consistently, while others write.

    The copy is taken in one step of SQLite's online backup API (``Connection.backup`` with all
    pages at once), inside one read transaction: in WAL mode writers carry on meanwhile, and the
    copy holds exactly the transactions committed before it began. It is written to a temporary
    file beside ``out``, checked with ``PRAGMA quick_check`` and renamed into place, so ``out``
    never holds a partial copy.

    Raises:
        ValidationError: the URL is not SQLite (field ``database_url``; PostgreSQL: use pg_dump),
            or ``out`` exists and ``overwrite`` is false, or is the ledger itself (field ``out``).
        DatabaseError: the ledger does not exist, cannot be read, or the copy fails its check.
    """
    normal = check_database_url(url)
    source = sqlite_path(normal)
    if source is None:
        if normal.startswith("postgresql"):
            raise ValidationError("database_url", PG_BACKUP_HINT)
        raise ValidationError("database_url", "an in-memory SQLite database cannot be backed up")
    if not source.is_file():
        raise DatabaseError(f"no SQLite database at {source}")
    if out.exists() and out.resolve() == source.resolve():
        raise ValidationError("out", f"{out} is the ledger itself")
    if out.exists() and not overwrite:
        raise ValidationError("out", f"{out} exists (give --force to replace it)")
    if not out.parent.is_dir():
        raise ValidationError("out", f"no directory {out.parent}")
    started = time.perf_counter()
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    try:
        _copy(source, partial)
        os.replace(partial, out)
    except sqlite3.Error as exc:
        raise DatabaseError(f"backup of {source} failed: {exc}") from None
    except OSError as exc:
        raise DatabaseError(f"backup to {out} failed: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return BackupReport(out, out.stat().st_size, time.perf_counter() - started)


def _copy(source: Path, target: Path) -> None:
    """One-step online backup of ``source`` into the new file ``target``, then its quick check."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst, pages=-1)  # all pages in one step: one consistent snapshot
            # A standalone file: no WAL beside it (the service switches WAL on again when it opens it).
            dst.execute("PRAGMA journal_mode=DELETE")
            found = dst.execute("PRAGMA quick_check").fetchone()
            if found is None or found[0] != "ok":
                raise sqlite3.DatabaseError(f"the copy failed its check: {found}")
        finally:
            dst.close()
    finally:
        src.close()
