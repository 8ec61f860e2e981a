"""Engine commands: ``rate``, ``rules``, ``replay`` and ``demo``."""

from __future__ import annotations

import typer
from rich.console import Console

from .. import REFERENCE_RULES, Match, PlayerStats, rate
from . import app

console = Console()


@app.command()
def demo() -> None:
    """Rate one example match with the reference rules and print the result."""
    match = Match.single("alice", "bob", "a", PlayerStats(won_by_16=1), PlayerStats(bad_moves=2))
    result = rate(match, {"alice": 1000, "bob": 1100}, REFERENCE_RULES)
    for change in result.changes:
        console.print(f"{change.player_id}: {change.rating_before} -> {change.rating_after}")


def _unused() -> None:  # pragma: no cover - placeholder keeps typer from collapsing to one command
    raise typer.Exit()
