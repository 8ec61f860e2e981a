"""Engine commands: ``rate``, ``rules show|check|init`` and ``demo``.

Every error a user can cause is printed to stderr as ``error: <message>`` (the message names the
field or key) and exits with status 2, without a traceback.
"""

from __future__ import annotations

import csv
import json
import sys
import textwrap
from collections.abc import Callable, Iterator
from datetime import datetime
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .. import REFERENCE_RULES, Match, PlayerStats, RatingResult, Rules, load_rules, rate
from ..core.coefficients import TABLE_DOCS, by_key
from ..core.engine import check_games_played
from ..core.explain import result_to_dict
from ..core.fold import RatingState, fold
from ..core.matchjson import parse_json_text, rate_request_from_json
from ..core.model import STAT_FIELDS, Winner, check_count, check_rating
from ..errors import ValidationError
from ..i18n import check_language, localized_changes, translations
from . import app
from .errors import fail, user_errors
from .explanation import print_explanation
from .options import OutOption, RulesOption, one_path

console = Console()

rules_app = typer.Typer(
    help="Show, check and create rating rules files (TOML).", no_args_is_help=True, add_completion=False
)
app.add_typer(rules_app, name="rules")


def _read_text(path: str) -> str:
    """Read a file, or stdin for ``-``; an unreadable file is a user error."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise fail(f"cannot read {path}: not UTF-8 text") from None


# ---------------------------------------------------------------------------- rate
class WinnerChoice(StrEnum):
    """Who won a match."""

    a = "a"
    b = "b"
    draw = "draw"


@app.command("rate")
def rate_command(
    player_a: Annotated[
        list[str] | None,
        typer.Option("--player-a", help="Player id of side a; give it twice for a team of two."),
    ] = None,
    player_b: Annotated[
        list[str] | None,
        typer.Option("--player-b", help="Player id of side b; give it twice for a team of two."),
    ] = None,
    winner: Annotated[WinnerChoice | None, typer.Option(help="Who won: a, b or draw.")] = None,
    rating_a: Annotated[
        list[int] | None,
        typer.Option(help="Rating of side a before the match, once per player (default: initial rating)."),
    ] = None,
    rating_b: Annotated[
        list[int] | None,
        typer.Option(help="Rating of side b before the match, once per player (default: initial rating)."),
    ] = None,
    a_bad_moves: Annotated[int, typer.Option("--a-bad-moves", help="Bad moves of player a.")] = 0,
    a_16: Annotated[int, typer.Option("--a-16", help="Rounds player a won as a 16er.")] = 0,
    a_24: Annotated[int, typer.Option("--a-24", help="Rounds player a won as a 24er.")] = 0,
    a_4_and_last: Annotated[
        int, typer.Option("--a-4-and-last", help="Rounds player a won with 4 and last.")
    ] = 0,
    b_bad_moves: Annotated[int, typer.Option("--b-bad-moves", help="Bad moves of player b.")] = 0,
    b_16: Annotated[int, typer.Option("--b-16", help="Rounds player b won as a 16er.")] = 0,
    b_24: Annotated[int, typer.Option("--b-24", help="Rounds player b won as a 24er.")] = 0,
    b_4_and_last: Annotated[
        int, typer.Option("--b-4-and-last", help="Rounds player b won with 4 and last.")
    ] = 0,
    match_file: Annotated[
        str | None,
        typer.Option(
            "--match",
            metavar="FILE|-",
            help="Read the match (and optional 'ratings') as JSON from FILE, or stdin for '-', "
            "instead of the player flags. See docs/engine.md for the form; it also takes teams.",
        ),
    ] = None,
    games_a: Annotated[
        list[int] | None,
        typer.Option(
            help="Games side a's player played before the match, once per player (default 0); "
            "read by rules with K by games played.",
        ),
    ] = None,
    games_b: Annotated[
        list[int] | None,
        typer.Option(help="Games side b's player played before the match, once per player (default 0)."),
    ] = None,
    rules_file: RulesOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the explanation object as JSON instead of tables.")
    ] = False,
    lang: Annotated[
        str, typer.Option("--lang", help="Language of the explanation: en, de, it, es, sk or zh.")
    ] = "en",
) -> None:
    """Rate one match and explain every player's rating change.

    One against one from flags, e.g. ``sedma-elo rate --player-a alice --player-b bob --winner a
    --rating-a 1000 --rating-b 1100 --a-16 1 --b-bad-moves 2``; teams and draws also from
    ``--match FILE`` (JSON).
    """
    with user_errors(f"{rules_file}: " if rules_file else ""):
        rules = load_rules(rules_file)
    with user_errors():
        counts = {
            "--a-bad-moves": a_bad_moves,
            "--a-16": a_16,
            "--a-24": a_24,
            "--a-4-and-last": a_4_and_last,
            "--b-bad-moves": b_bad_moves,
            "--b-16": b_16,
            "--b-24": b_24,
            "--b-4-and-last": b_4_and_last,
        }
        if match_file is not None:
            given = [name for name, v in (("--player-a", player_a), ("--player-b", player_b)) if v]
            given += [name for name, v in (("--winner", winner), ("--rating-a", rating_a)) if v is not None]
            given += [name for name, v in (("--rating-b", rating_b),) if v is not None]
            given += [name for name, v in counts.items() if v != 0]
            if given:
                raise fail(f"{given[0]}: cannot be combined with --match (put it in the JSON)")
            match, ratings = rate_request_from_json(parse_json_text(_read_text(match_file)))
        else:
            match, ratings = _match_from_flags(player_a, player_b, winner, rating_a, rating_b, counts)
        # Games played default to 0 (a new player), so that rules with K by games played rate too;
        # they are shown only when given or read by the rules.
        games = _per_player(match, ("--games-a", games_a), ("--games-b", games_b), check_games_played)
        needed = bool(games) or rules.uses_games_played
        result = rate(match, ratings, rules, games_played=games if needed else None)
    with user_errors():
        lang = check_language("--lang", lang)
    if as_json:
        data = result_to_dict(result)
        data["players"] = localized_changes(data["players"], lang)
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_explanation(result, console, translations(lang))


def _match_from_flags(
    player_a: list[str] | None,
    player_b: list[str] | None,
    winner: str | None,
    rating_a: list[int] | None,
    rating_b: list[int] | None,
    counts: dict[str, int],
) -> tuple[Match, dict[str, int]]:
    if not player_a:
        raise ValidationError("--player-a", "is required (or give --match FILE)")
    if not player_b:
        raise ValidationError("--player-b", "is required (or give --match FILE)")
    if winner is None:
        raise ValidationError("--winner", "is required: a, b or draw")
    if winner not in ("a", "b", "draw"):
        raise ValidationError("--winner", f"must be one of 'a', 'b', 'draw', got {winner!r}")
    for name, value in counts.items():
        check_count(name, value)
    team_a, team_b = tuple(player_a), tuple(player_b)
    if len(team_a) > 1 and any(counts.values()):
        raise ValidationError(
            next(name for name, v in counts.items() if v), "statistics of team players need --match FILE"
        )
    w: Winner = "a" if winner == "a" else "b" if winner == "b" else "draw"
    if len(team_a) == 1 and len(team_b) == 1:
        values = list(counts.values())
        stats_a = PlayerStats(*values[:4])
        stats_b = PlayerStats(*values[4:])
        match = Match.single(team_a[0], team_b[0], w, stats_a, stats_b)
    else:
        match = Match(team_a, team_b, w, {})
    return match, _per_player(match, ("--rating-a", rating_a), ("--rating-b", rating_b), check_rating)


def _per_player(
    match: Match,
    side_a: tuple[str, list[int] | None],
    side_b: tuple[str, list[int] | None],
    check: Callable[[str, object], int],
) -> dict[str, int]:
    """Values given once per player of each side (``--rating-a 1000 --rating-a 1100``), by player id."""
    out: dict[str, int] = {}
    for (flag, given), team in ((side_a, match.team_a), (side_b, match.team_b)):
        if given:
            if len(given) != len(team):
                raise ValidationError(
                    flag, f"give it once per player of the side ({len(team)}), got {len(given)}"
                )
            out.update(zip(team, (check(flag, v) for v in given), strict=True))
    return out


# ---------------------------------------------------------------------------- rules
@rules_app.command("show")
def rules_show(
    file_arg: Annotated[
        Path | None,
        typer.Argument(help="Rules TOML file (default: the reference rules); or --rules.", metavar="[FILE]"),
    ] = None,
    rules_file: RulesOption = None,
    table: Annotated[bool, typer.Option("--table", help="Print a table instead of TOML.")] = False,
) -> None:
    """Print a rule set as TOML (or as a table with --table)."""
    with user_errors():
        file = one_path(("FILE", file_arg), ("--rules", rules_file), required=False)
    with user_errors(f"{file}: " if file else ""):
        rules = load_rules(file)
    if not table:
        typer.echo(rules.to_toml(), nl=False)
        return
    out = Table(title=f"Rules {rules.label}")
    out.add_column("key", style="bold")
    out.add_column("value")
    out.add_column("meaning")
    for key, value in _flatten(rules.to_dict()):
        out.add_row(key, value, by_key(key).doc)
    console.print(out)


def _flatten(data: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        elif isinstance(value, list):
            yield (
                f"{prefix}{key}",
                ", ".join(
                    " ".join(f"{k}={v}" for k, v in item.items()) if isinstance(item, dict) else str(item)
                    for item in value
                ),
            )
        else:
            yield f"{prefix}{key}", str(value)


@rules_app.command("check")
def rules_check(
    file_arg: Annotated[
        Path | None, typer.Argument(help="Rules TOML file to validate; or --rules.", metavar="[FILE]")
    ] = None,
    rules_file: RulesOption = None,
) -> None:
    """Validate a rules file: print OK, or the error naming the key (exit status 2)."""
    with user_errors():
        file = one_path(("FILE", file_arg), ("--rules", rules_file))
        assert file is not None
    with user_errors(f"{file}: "):
        rules = load_rules(file)
    typer.echo(f"OK: {file} is valid rules {rules.label}")


@rules_app.command("init")
def rules_init(
    file_arg: Annotated[
        Path | None, typer.Argument(help="Where to write the new rules file; or --out.", metavar="[FILE]")
    ] = None,
    out: OutOption = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite FILE if it exists.")] = False,
) -> None:
    """Write the reference rules as a commented TOML file to start a rule set from."""
    with user_errors():
        file = one_path(("FILE", file_arg), ("--out", out))
        assert file is not None
    if file.exists() and not force:
        raise fail(f"{file} exists; use --force to overwrite it")
    try:
        file.write_text(commented_toml(REFERENCE_RULES), encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {file}: {exc.strerror}") from None
    typer.echo(
        f"wrote {file} (the reference rules {REFERENCE_RULES.label}); check edits with "
        f"'sedma-elo rules check {file}'"
    )


_HEADER = """\
# sedma-elo rating rules, written by `sedma-elo rules init`.
# These are the reference rules: the coefficients of the game makers' published C# method.
# Scores are in units of a match result (a win scores 1, a draw 0.5, a loss 0).
# Edit the values, then validate with `sedma-elo rules check FILE`. Missing keys keep the
# reference value; unknown keys are refused. Every key is listed in docs/rules.md.
"""


def commented_toml(rules: Rules) -> str:
    """``rules.to_toml()`` with a header and each table's and key's documented meaning before it.

    The comments come from the coefficient declarations and are only added: the text reads back
    to rules equal to ``rules``.
    """
    lines = [_HEADER]
    table = ""
    for line in rules.to_toml().splitlines():
        if line.startswith("["):
            table = line.strip("[]")
            comment = TABLE_DOCS.get(table, "")
        elif line:
            key = (f"{table}." if table else "") + line.split(" = ", 1)[0]
            comment = by_key(key).doc
        else:
            comment = ""
        lines.extend(f"# {text}" for text in textwrap.wrap(comment, 98))
        lines.append(line)
    return "\n".join(lines).rstrip("\n") + "\n"


# ---------------------------------------------------------------------------- demo
SAMPLE = "sample_history.csv"


def load_sample_history() -> list[Match]:
    """The bundled invented sample history (``sedma_elo/data/sample_history.csv``), oldest first."""
    text = resources.files("sedma_elo").joinpath("data", SAMPLE).read_text(encoding="utf-8")
    matches = []
    for row in csv.DictReader(text.splitlines()):
        stats = [PlayerStats(*(int(row[f"{name}_{side}"]) for name in STAT_FIELDS)) for side in "ab"]
        w: Winner = "a" if row["winner"] == "a" else "b" if row["winner"] == "b" else "draw"
        matches.append(
            Match.single(
                row["player_a"],
                row["player_b"],
                w,
                stats[0],
                stats[1],
                match_id=row["match_id"],
                played_at=datetime.fromisoformat(row["played_at"]),
            )
        )
    return matches


def replay_matches(
    matches: list[Match], rules: Rules = REFERENCE_RULES
) -> tuple[dict[str, int], dict[str, int], list[RatingResult]]:
    """Rate ``matches`` in order from empty ratings with the fold: (ratings, matches played, results)."""
    state = RatingState()
    results = list(fold(matches, rules, state))
    return state.ratings, state.games, results


@app.command()
def demo(
    top: Annotated[int, typer.Option(help="How many leaderboard rows to print.", min=1)] = 10,
    rules_file: RulesOption = None,
) -> None:
    """Replay the bundled sample history, print the leaderboard and explain one match."""
    with user_errors(f"{rules_file}: " if rules_file else ""):
        rules = load_rules(rules_file)
    matches = load_sample_history()
    ratings, played, results = replay_matches(matches, rules)
    board = Table(title=f"Leaderboard after {len(matches)} sample matches ({rules.label})")
    board.add_column("rank", justify="right")
    board.add_column("player")
    board.add_column("rating", justify="right")
    board.add_column("matches", justify="right")
    ranked = sorted(ratings.items(), key=lambda item: (-item[1], item[0]))
    for rank, (pid, rating) in enumerate(ranked[:top], start=1):
        board.add_row(str(rank), pid, str(rating), str(played[pid]))
    console.print(board)
    console.print()
    chosen = _interesting(results)
    console.print(f"Explained: match {chosen.match.match_id} played {chosen.match.played_at:%Y-%m-%d %H:%M}")
    print_explanation(chosen, console)


def _interesting(results: list[RatingResult]) -> RatingResult:
    """The latest match in which the clamp or a cap changed a score (else the latest match)."""
    for result in reversed(results):
        for c in result.changes:
            s = c.score
            if s.clamp != "none" and (s.bonus_scaled > 0 or s.malus.value > 0):
                return result
    return results[-1]
