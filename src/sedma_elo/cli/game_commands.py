"""Game commands: ``analyze`` a game record, ``play`` a bot match into a record, run a bot ``league``."""

from __future__ import annotations

import json
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import GameRecordError
from ..game.analysis import AnalysisConfig, Judge, MatchAnalysis, analyze
from ..game.bots import make_bot, play_match
from ..game.config import GameRules
from ..game.league import BadMoveMode, LeagueConfig, run_league, write_history_csv
from ..game.record import dumps_record, load_record
from . import app
from .errors import fail, user_errors
from .options import OutOption, one_path

console = Console()
err_console = Console(stderr=True)


class JudgeChoice(StrEnum):
    """Which moves ``analyze`` judges."""

    all = "all"
    exact = "exact"
    none = "none"


class BotChoice(StrEnum):
    """The bots ``play`` can seat."""

    random = "random"
    greedy = "greedy"
    sampling = "sampling"


class BadMovesChoice(StrEnum):
    """Which bad moves the league counts."""

    endgame = "endgame"
    full = "full"
    none = "none"


_JUDGES: dict[JudgeChoice, Judge] = {
    JudgeChoice.all: "all",
    JudgeChoice.exact: "exact",
    JudgeChoice.none: "none",
}
_BAD_MOVES: dict[BadMovesChoice, BadMoveMode] = {
    BadMovesChoice.endgame: "endgame",
    BadMovesChoice.full: "full",
    BadMovesChoice.none: "none",
}


def _print_table(result: MatchAnalysis) -> None:
    rep = result.replay
    console.print(
        f"Match {result.record.match_id or '(no id)'}: {len(rep.results)} rounds, "
        f"match points {rep.match_points[0]}:{rep.match_points[1]}, winner side {result.winner}"
    )
    table = Table(title="Per player")
    for col in ("player", "side", "rounds won", "16er", "24er", "4 and last", "bad moves"):
        table.add_column(col, justify="left" if col == "player" else "right")
    for p in result.players:
        table.add_row(
            p.player,
            "ab"[p.side],
            str(p.rounds_won),
            str(p.won_by_16),
            str(p.won_by_24),
            str(p.won_by_4_and_last),
            str(len(p.bad_moves)),
        )
    console.print(table)
    bad = [b for p in result.players for b in p.bad_moves]
    if not bad:
        console.print(f"No bad moves ({result.judged_moves} moves judged).")
        return
    bad.sort(key=lambda b: (b.round, b.move))
    moves = Table(title=f"Bad moves ({result.judged_moves} moves judged)")
    for col in ("round", "move", "player", "position", "played", "best", "points lost", "how"):
        moves.add_column(col)
    for b in bad:
        moves.add_row(
            str(b.round), str(b.move), b.player, b.position(), b.played, b.best, f"{b.loss:.2f}", b.method
        )
    console.print(moves)


@app.command("analyze")
def analyze_command(
    record: Annotated[Path, typer.Argument(help="The game record (JSON, format sedma-game/1).")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rating input (the service's match body) as JSON.")
    ] = False,
    judge: Annotated[
        JudgeChoice,
        typer.Option(help="Which moves to judge: all, exact (stock-empty two-player only), none."),
    ] = JudgeChoice.all,
    samples: Annotated[int, typer.Option(help="Random deals per judged move while cards are hidden.")] = 32,
    max_samples: Annotated[
        int, typer.Option(help="Most deals for a move whose loss is within noise of the threshold.")
    ] = 128,
    seed: Annotated[int, typer.Option(help="Seed of the sampling (same seed, same result).")] = 0,
    exact_threshold: Annotated[
        float, typer.Option(help="Points a move must lose against perfect play to be bad.")
    ] = 1.0,
    sampled_threshold: Annotated[
        float, typer.Option(help="Expected points a move must lose (strictly more) to be bad, by sampling.")
    ] = 1.0,
) -> None:
    """Validate a game record and print each player's rounds won, 16er/24er/4-and-last and bad moves."""
    judge_mode: Judge = _JUDGES[judge]
    try:
        config = AnalysisConfig(
            exact_threshold=exact_threshold,
            sampled_threshold=sampled_threshold,
            samples=samples,
            max_samples=max(max_samples, samples),
            seed=seed,
            judge=judge_mode,
        )
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        rec = load_record(record)
        result = analyze(rec, config)
    except OSError as exc:
        raise fail(f"cannot read {record}: {exc.strerror or exc}") from None
    except GameRecordError as exc:
        raise fail(f"{record}: invalid game record: {exc}") from None
    if as_json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        _print_table(result)


@app.command("play")
def play_command(
    out_arg: Annotated[
        Path | None,
        typer.Argument(
            help="Where to write the game record (JSON); or --out.", metavar="[OUT]", show_default=False
        ),
    ] = None,
    out: OutOption = None,
    bot_a: Annotated[BotChoice, typer.Option(help="Seat 0's bot.")] = BotChoice.greedy,
    bot_b: Annotated[BotChoice, typer.Option(help="Seat 1's bot.")] = BotChoice.sampling,
    seed: Annotated[int, typer.Option(help="Seed of the deals and of the bots.")] = 0,
    target: Annotated[int, typer.Option(help="Match points needed to win the match.")] = 3,
    samples: Annotated[int, typer.Option(help="Worlds per decision of a sampling bot.")] = 8,
) -> None:
    """Let two bots play a whole match and write its game record."""
    with user_errors():
        record_path = one_path(("OUT", out_arg), ("--out", out))
        assert record_path is not None
    try:
        bots = [make_bot(bot_a, seed * 2 + 1, samples), make_bot(bot_b, seed * 2 + 2, samples)]
        rules = GameRules(target=target)
    except (ValueError, GameRecordError) as exc:
        raise fail(str(exc)) from None
    played = play_match(bots, [f"{bot_a}-a", f"{bot_b}-b"], seed, rules, match_id=f"play-{seed}")
    record_path.write_text(dumps_record(played.record, pretty=True) + "\n", encoding="utf-8")
    a, b = played.match_points
    console.print(f"{len(played.results)} rounds, {a}:{b}; record written to {record_path}")


@app.command("league")
def league_command(
    out: Annotated[
        Path | None,
        typer.Argument(
            help="The match-history CSV to write (gzipped when it ends in .gz); or --out.",
            metavar="[OUT]",
            show_default=False,
        ),
    ] = None,
    out_option: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="The file to write (instead of OUT).")
    ] = None,
    matches: Annotated[int, typer.Option(help="Number of matches.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Master seed: the whole league follows from it.")] = 0,
    sampling_share: Annotated[
        float, typer.Option(help="Fraction of matches with a (slow) sampling bot, 0..1.")
    ] = 0.02,
    bad_moves: Annotated[
        BadMovesChoice,
        typer.Option(help="Bad moves counted: endgame (exact positions), full (also sampled), none."),
    ] = BadMovesChoice.endgame,
    start: Annotated[str, typer.Option(help="Date of the first match (ISO 8601).")] = "2025-01-01",
    per_day: Annotated[int, typer.Option(help="Matches dated each day.")] = 100,
) -> None:
    """Run a league of bots of graded strength and write its match history in the project's CSV format."""
    with user_errors():
        out = one_path(("OUT", out), ("--out", out_option))
        assert out is not None
    try:
        config = LeagueConfig(
            matches=matches,
            seed=seed,
            sampling_share=sampling_share,
            bad_moves=_BAD_MOVES[bad_moves],
            start=date.fromisoformat(start),
            per_day=per_day,
        )
    except ValueError as exc:
        raise fail(str(exc)) from None
    columns = (TextColumn("league"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("league", total=matches)
        n = write_history_csv(out, run_league(config, lambda done: progress.update(task, completed=done)))
    console.print(f"{n} matches written to {out}")
