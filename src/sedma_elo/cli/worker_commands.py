"""``sedma-elo worker``: analyse posted game records and apply their matches, on any machine."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import SedmaEloError
from . import app
from .errors import fail
from .options import DatabaseUrl


@app.command()
def worker(
    database_url: DatabaseUrl = None,
    lease: Annotated[
        float,
        typer.Option(
            help="Seconds a game is held without a renewal or heartbeat (a dead worker's game is retaken).",
            min=1,
        ),
    ] = 60.0,
    poll: Annotated[float, typer.Option(help="Seconds between looks for work when idle.", min=0.01)] = 0.5,
) -> None:
    """Analyse queued game records (POST /v1/games) and apply each match once, until interrupted.

    Any number of workers may share one database: on PostgreSQL each is a procrastinate worker
    that runs the games' jobs (one game per worker at a time, a game never in two workers); on
    SQLite they claim games from the games table, taking turns at the write lock. Stop one with
    SIGTERM or Ctrl-C: it finishes the game in hand. A worker killed outright loses nothing: its
    game is taken again once its lease runs out (PostgreSQL: once its heartbeat is that old), and
    the ledger applies no match twice.
    """
    from ..service.games.worker import run_worker
    from ..storage.urls import normalize_url

    try:
        run_worker(normalize_url(database_url), lease, poll)
    except SedmaEloError as exc:
        raise fail(exc) from exc
