"""``sedma-elo backup OUT``: an online copy of a SQLite ledger, safe while the service writes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from . import app
from .errors import user_errors
from .options import DatabaseUrl

console = Console()


@app.command()
def backup(
    out: Annotated[
        Path, typer.Argument(help="The backup file to write (a SQLite database).", dir_okay=False)
    ],
    database_url: DatabaseUrl = None,
    force: Annotated[bool, typer.Option("--force", help="Replace OUT if it exists.")] = False,
) -> None:
    """Copy a SQLite ledger to OUT with SQLite's online backup, while the service keeps writing.

    The copy holds every match committed before it began. Restore by stopping the service and
    putting OUT in the ledger's place (then `sedma-elo verify`). PostgreSQL is refused: use
    pg_dump and pg_restore (docs/service.md, "Backups").
    """
    from ..storage.backup import backup_sqlite

    with user_errors():
        done = backup_sqlite(database_url, out, overwrite=force)
    console.print(f"Backed up to {done.path} ({done.size:,} bytes) in {done.seconds:.1f} s.")
