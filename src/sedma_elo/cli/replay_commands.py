"""The ``replay`` command: rate a whole match-history file and write the final ratings."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from ..core.rules import Rules, load_rules
from ..errors import SedmaEloError
from . import app
from .errors import fail, user_errors
from .options import ProgressOption, RulesOption, SkipBad, SkipBadRows, one_path
from .progress import ProgressBar, show_progress

if TYPE_CHECKING:
    from ..batch.replay import ReplayResult

_stderr = Console(stderr=True)
_stdout = Console()


@app.command("replay")
def replay_command(
    history: Annotated[
        Path,
        typer.Argument(help="Match-history file: CSV or JSON Lines, plain or gzipped.", show_default=False),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="Write player_id,rating,matches_played for every player here (CSV, highest rating first).",
        ),
    ] = None,
    ratings_out: Annotated[Path | None, typer.Option("--ratings-out", hidden=True)] = None,
    changes_out: Annotated[
        Path | None,
        typer.Option(
            "--changes-out",
            metavar="FILE",
            help="Also write every match's changes: match_id,player,before,after,delta (CSV).",
        ),
    ] = None,
    rules_file: RulesOption = None,
    skip_bad: SkipBad = False,
    skip_bad_rows: SkipBadRows = False,
    progress: ProgressOption = None,
    top: Annotated[int, typer.Option("--top", help="Players to show when no --out is given.", min=0)] = 10,
) -> None:
    """Replay HISTORY in file order from scratch and write the final ratings.

    Invalid input (a bad row, rules file or path) prints the error, naming the field and line,
    and exits with code 2 without writing any output.
    """
    show = show_progress(progress)
    with user_errors():
        ratings_out = one_path(("--ratings-out", ratings_out), ("--out", out), required=False)
    with user_errors(f"{rules_file}: " if rules_file else ""):
        rules = load_rules(rules_file)
    try:
        result, errors = _run(history, rules, skip_bad or skip_bad_rows, show, changes_out is not None)
    except SedmaEloError as exc:
        raise fail(f"{history}: {exc}") from None
    for err in errors:
        typer.echo(f"skipped: {history}: {err}", err=True)
    if ratings_out is not None:
        _write_text(ratings_out, _ratings_csv(result))
    if changes_out is not None:
        _write_text(changes_out, _changes_csv(result))
    if ratings_out is None:
        _print_table(result, top)
    _stderr.print(
        f"{len(result.match_ids)} matches, {len(result.player_ids)} players, rules {rules.label}"
        + (f", {len(errors)} bad rows skipped" if errors else ""),
        highlight=False,
    )


def _run(
    path: Path, rules: Rules, skip_bad: bool, show: bool, record: bool
) -> tuple[ReplayResult, list[SedmaEloError]]:
    from ..batch.history import read_history
    from ..batch.replay import replay

    with ProgressBar(show) as bar:
        bar.phase(f"reading {path.name}")
        source, errors = read_history(path, skip_bad=skip_bad)
        bar.phase("replaying")
        result = replay(source, rules, record=record, progress=bar.update)
    return result, list(errors)


def _ratings_csv(result: ReplayResult) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("player_id", "rating", "matches_played"))
    writer.writerows(result.table())
    return out.getvalue()


def _changes_csv(result: ReplayResult) -> str:
    assert result.record is not None
    ids = result.player_ids
    before = result.record.before.tolist()
    after = result.record.after.tolist()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("match_id", "player", "before", "after", "delta"))
    for match_id, a, b, (ba, bb), (aa, ab) in zip(
        result.match_ids, result.player_a.tolist(), result.player_b.tolist(), before, after, strict=True
    ):
        writer.writerow((match_id, ids[a], ba, aa, aa - ba))
        writer.writerow((match_id, ids[b], bb, ab, ab - bb))
    return out.getvalue()


def _write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {path}: {exc.strerror or exc}") from None


def _print_table(result: ReplayResult, top: int) -> None:
    from rich.table import Table

    table = Table(title=f"Top {top} of {len(result.player_ids)} players")
    for name in ("player_id", "rating", "matches_played"):
        table.add_column(name, justify="left" if name == "player_id" else "right")
    for pid, rating, played in result.table()[:top]:
        table.add_row(pid, str(rating), str(played))
    _stdout.print(table)
