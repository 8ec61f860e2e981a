"""The ``sedma-elo`` command line. Each area registers its commands in a module of its own.

Conventions shared by every command (``cli/options.py`` declares the shared options):
``--skip-bad`` wherever a history file is read, ``--rules FILE`` wherever rules are taken,
``--out FILE`` for a command's main output, choices listed for enumerated options, and every
user mistake reported as ``error: ...`` on stderr with exit status 2 (``cli/errors.py``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from .errors import CliGroup

app = typer.Typer(
    name="sedma-elo",
    help="Exact, explainable Elo ratings for the card game Seven (Sedma).",
    no_args_is_help=True,
    add_completion=False,
    cls=CliGroup,
)


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"sedma-elo {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Exact, explainable Elo ratings for the card game Seven (Sedma)."""


# Command modules register themselves on `app` when imported; keep this list sorted.
from . import analysis_commands as analysis_commands  # noqa: E402
from . import backup_commands as backup_commands  # noqa: E402
from . import engine_commands  # noqa: E402,F401
from . import game_commands as game_commands  # noqa: E402
from . import ledger_commands as ledger_commands  # noqa: E402
from . import replay_commands as replay_commands  # noqa: E402
from . import service_commands as service_commands  # noqa: E402
from . import worker_commands as worker_commands  # noqa: E402
