"""Options shared by several commands, declared once so that every command spells them alike."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import ValidationError

__all__ = [
    "DatabaseUrl",
    "OutOption",
    "ProgressOption",
    "RulesOption",
    "SkipBad",
    "SkipBadRows",
    "StoreCareers",
    "one_path",
]

#: The ledger's database (``SEDMA_ELO_DATABASE_URL``; ``None``: the default SQLite file).
DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="SEDMA_ELO_DATABASE_URL",
        help="SQLAlchemy URL: sqlite:///path.db (default ./sedma-elo.db) or postgresql://user@host/db.",
        show_default=False,
    ),
]
#: Leave out bad rows of a history file (each reported on stderr) instead of refusing the file.
SkipBad = Annotated[
    bool,
    typer.Option(
        "--skip-bad", help="Leave out bad rows (each reported on stderr) instead of refusing the file."
    ),
]
#: The old spelling of ``--skip-bad`` (``replay``), still accepted, no longer shown.
SkipBadRows = Annotated[bool, typer.Option("--skip-bad-rows", hidden=True)]
#: A rules TOML file; the default is the reference rules.
RulesOption = Annotated[
    Path | None,
    typer.Option("--rules", metavar="FILE", help="Rules TOML file (default: the reference rules)."),
]
#: Whether a long command draws a progress bar on stderr (default: only when stderr is a terminal).
ProgressOption = Annotated[
    bool | None,
    typer.Option(
        "--progress/--no-progress", help="Show a progress bar on stderr (default: only on a terminal)."
    ),
]
#: After a bulk change: store the page summary's state of the players with at least this many
#: matches (``None``: the ledger's ``STORE_BUSY``, 1,000; 0: none). Not imported from the ledger
#: here, so that commands without a database start without SQLAlchemy.
StoreCareers = Annotated[
    int | None,
    typer.Option(
        "--store-careers",
        metavar="MATCHES",
        min=0,
        show_default=False,
        help="Then store the player page summary of each player with at least MATCHES matches,"
        " so that their first page view is fast (default: 1000; 0: none).",
    ),
]
#: Where a command writes its main output.
OutOption = Annotated[Path | None, typer.Option("--out", metavar="FILE", help="The file to write.")]


def one_path(
    first: tuple[str, Path | None], second: tuple[str, Path | None], *, required: bool = True
) -> Path | None:
    """The one path given by either of two spellings (a positional form and its option).

    Raises:
        ValidationError: both given and different, or neither given when ``required`` (the field
            is the option's name).
    """
    (name_a, a), (name_b, b) = first, second
    if a is not None and b is not None and a != b:
        raise ValidationError(name_b, f"give it once: {name_a} {a} and {name_b} {b} differ")
    chosen = a if a is not None else b
    if chosen is None and required:
        raise ValidationError(name_b, f"is required (or give {name_a})")
    return chosen
