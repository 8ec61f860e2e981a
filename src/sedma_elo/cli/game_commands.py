"""Game commands: ``analyze`` a game record, ``play`` a bot match into a record, run a bot ``league``."""

from __future__ import annotations

import json
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..core.sentences import ENGLISH, N_, Translator
from ..errors import GameRecordError, ValidationError
from ..i18n import check_language, translations
from . import app
from .errors import fail, user_errors
from .options import OutOption, one_path

if TYPE_CHECKING:  # the game package takes a fifth of the CLI's start-up: imported by its commands only
    from ..game.analysis import Judge, MatchAnalysis
    from ..game.league import BadMoveMode

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


def _print_table(result: MatchAnalysis, tr: Translator = ENGLISH) -> None:
    rep = result.replay
    console.print(
        tr.gettext("Match {id}: {rounds} rounds, match points {a}:{b}, winner side {winner}").format(
            id=result.record.match_id or tr.gettext("(no id)"),
            rounds=len(rep.results),
            a=rep.match_points[0],
            b=rep.match_points[1],
            winner=result.winner,
        )
    )
    table = Table(title=tr.gettext("Per player"))
    columns = (
        N_("player"),
        N_("side"),
        N_("rounds won"),
        N_("16er"),
        N_("24er"),
        N_("4 and last"),
        N_("bad moves"),
    )
    for col in columns:
        table.add_column(tr.gettext(col), justify="left" if col == "player" else "right")
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
        console.print(tr.gettext("No bad moves ({n} moves judged).").format(n=result.judged_moves))
        return
    bad.sort(key=lambda b: (b.round, b.move))
    moves = Table(title=tr.gettext("Bad moves ({n} moves judged)").format(n=result.judged_moves))
    headings = (
        N_("round"),
        N_("move"),
        N_("player"),
        N_("position"),
        N_("played"),
        N_("better"),
        N_("cost"),
        N_("how"),
    )
    for col in map(tr.gettext, headings):
        moves.add_column(col)
    for b in bad:
        moves.add_row(
            str(b.round), str(b.move), b.player, b.position(), b.played, " ".join(b.better), b.cost, b.method
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
    details: Annotated[
        bool,
        typer.Option(
            "--details", help="With --json: print the whole analysis (rounds, every bad move) instead."
        ),
    ] = False,
    # The three counts default to the analysis's own (AnalysisConfig), read only when the command
    # runs: the game package is not imported at the CLI's start-up.
    min_deals: Annotated[
        int | None,
        typer.Option(
            help="Deals of the unseen cards solved at first for a move judged by sampling "
            "(default: the analysis's)."
        ),
    ] = None,
    max_deals: Annotated[
        int | None,
        typer.Option(help="Most deals for a move whose verdict is still open (default: the analysis's)."),
    ] = None,
    max_stock: Annotated[
        int | None,
        typer.Option(help="Judge hidden-card moves only up to this many stock cards."),
    ] = None,
    max_listed: Annotated[
        int | None,
        typer.Option(
            help="Solve every deal of the unseen cards when they are at most this many "
            "(default: the analysis's)."
        ),
    ] = None,
    confidence: Annotated[float, typer.Option(help="Confidence of a sampled verdict, in (0.5, 1).")] = 0.99,
    seed: Annotated[int, typer.Option(help="Mixed into the record's own sampling seed.")] = 0,
    lang: Annotated[
        str, typer.Option("--lang", help="Language of the table: en, de, it, es, sk or zh.")
    ] = "en",
) -> None:
    """Validate a game record and print each player's rounds won, 16er/24er/4-and-last and bad moves."""
    from ..game.analysis import AnalysisConfig, analyze
    from ..game.record import load_record

    judge_mode: Judge = _JUDGES[judge]
    try:
        counts = {"min_deals": min_deals, "max_deals": max_deals, "max_listed": max_listed}
        config = AnalysisConfig(
            confidence=confidence,
            max_stock=max_stock,
            seed=seed,
            judge=judge_mode,
            **{name: n for name, n in counts.items() if n is not None},
        )
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        tr = translations(check_language("--lang", lang))
    except ValidationError as exc:
        raise fail(exc) from None
    try:
        rec = load_record(record)
        result = analyze(rec, config)
    except OSError as exc:
        raise fail(f"cannot read {record}: {exc.strerror or exc}") from None
    except GameRecordError as exc:
        raise fail(f"{record}: invalid game record: {exc}") from None
    if as_json:
        print(json.dumps(result.to_dict() if details else result.to_json(), indent=2))
    else:
        _print_table(result, tr)


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
    from ..game.bots import make_bot, play_match
    from ..game.config import GameRules
    from ..game.record import dumps_record

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
    players: Annotated[
        int, typer.Option(help="2, or 4 (two teams; the output must then be JSON Lines, .jsonl).")
    ] = 2,
) -> None:
    """Run a league of bots of graded strength and write its match history in the project's CSV format."""
    from ..game.config import GameRules
    from ..game.league import LeagueConfig, bad_moves_by_bot, run_league, write_history_csv

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
            rules=GameRules(players=players),
        )
    except (ValueError, GameRecordError) as exc:
        raise fail(str(exc)) from None
    if players == 4 and not out.name.lower().removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        raise fail(f"{out}: a four-player league is written as JSON Lines: name it .jsonl (or .jsonl.gz)")
    columns = (TextColumn("league"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("league", total=matches)
        played = list(run_league(config, lambda done: progress.update(task, completed=done)))
    n = write_history_csv(out, played)
    console.print(f"{n} matches written to {out}")
    table = Table(title=f"Bad moves by bot ({bad_moves.value})")
    for col in ("bot", "matches", "won", "bad moves", "per match"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for pid, tally in bad_moves_by_bot(played).items():
        table.add_row(
            pid, str(tally.matches), str(tally.wins), str(tally.bad_moves), f"{tally.bad_per_match:.2f}"
        )
    console.print(table)
