"""The ``sedma-elo`` command line. Each area registers its commands in a module of its own."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="sedma-elo",
    help="Exact, explainable Elo ratings for the card game Seven (Sedma).",
    no_args_is_help=True,
    add_completion=False,
)

# Command modules register themselves on `app` when imported; keep this list sorted.
from . import analysis_commands as analysis_commands  # noqa: E402
from . import engine_commands  # noqa: E402,F401
from . import game_commands as game_commands  # noqa: E402
from . import replay_commands as replay_commands  # noqa: E402
from . import service_commands as service_commands  # noqa: E402
