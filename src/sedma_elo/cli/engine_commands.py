"""Engine commands: ``rate``, ``rules show|check|init`` and ``demo``.

Every error a user can cause is printed to stderr as ``error: <message>`` (the message names the
field or key) and exits with status 2, without a traceback.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from datetime import datetime
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import REFERENCE_RULES, Match, PlayerStats, RatingResult, Rules, load_rules, rate
from ..core.explain import explain_player, result_to_dict
from ..core.matchjson import parse_json_text, rate_request_from_json
from ..core.model import STAT_FIELDS, Winner, check_count, check_rating
from ..errors import ValidationError
from . import app
from .errors import fail, user_errors
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
    rules_file: RulesOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the explanation object as JSON instead of tables.")
    ] = False,
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
        result = rate(match, ratings, rules)
    if as_json:
        typer.echo(json.dumps(result_to_dict(result), indent=2, ensure_ascii=False))
    else:
        print_explanation(result, console)


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
    ratings: dict[str, int] = {}
    for flag, team, given in (("--rating-a", team_a, rating_a), ("--rating-b", team_b, rating_b)):
        if given:
            if len(given) != len(team):
                raise ValidationError(
                    flag, f"give it once per player of the side ({len(team)}), got {len(given)}"
                )
            ratings.update(zip(team, (check_rating(flag, v) for v in given), strict=True))
    w: Winner = "a" if winner == "a" else "b" if winner == "b" else "draw"
    if len(team_a) == 1 and len(team_b) == 1:
        values = list(counts.values())
        stats_a = PlayerStats(*values[:4])
        stats_b = PlayerStats(*values[4:])
        match = Match.single(team_a[0], team_b[0], w, stats_a, stats_b)
    else:
        match = Match(team_a, team_b, w, {})
    return match, ratings


# ---------------------------------------------------------------------------- explanation table
_BONUS_LABELS = {
    "won_by_16": "16er bonus",
    "won_by_24": "24er bonus",
    "won_by_4_and_last": "4-and-last bonus",
}


def print_explanation(result: RatingResult, out: Console) -> None:
    """Print ``result`` as a table (one column per player) followed by each player's sentences."""
    data = result_to_dict(result)
    table = Table(title=f"Rating change ({data['rules']})", show_lines=False)
    table.add_column("", style="bold")
    players: list[dict[str, Any]] = data["players"]
    for p in players:
        table.add_column(f"{p['player_id']} ({p['side']})", justify="right")

    def row(label: str, cells: list[str]) -> None:
        table.add_row(label, *cells)

    row("outcome", [p["outcome"] for p in players])
    row("rating before", [str(p["rating_before"]) for p in players])
    row("K", [str(p["k"]) for p in players])
    row("expected score", [f"{p['expected']:.4f}" for p in players])
    row("base score", [_g(p["score"]["base"]) for p in players])
    for kind, label in _BONUS_LABELS.items():
        row(label, [_term(p["score"]["bonuses"][kind], "per_round") for p in players])
    row("bonus kept", [_kept(p["score"]) for p in players])
    row("malus", [_term(p["score"]["malus"], "per_bad_move", sign="-") for p in players])
    row("score before clamp", [_g(p["score"]["unclamped"]) for p in players])
    row("clamp", [_clamp(p["score"]) for p in players])
    row("adjusted score", [_g(p["score"]["adjusted"]) for p in players])
    row("change (unrounded)", [f"{p['change']:+.4f}" for p in players])
    row("rating after", [f"{p['rating_after']} ({p['delta']:+d})" for p in players])
    out.print(table)
    for p in players:
        out.print()
        out.print(f"[bold]{p['player_id']}[/bold]")
        for sentence in explain_player(result, p["player_id"]):
            out.print(Padding(Text(sentence), (0, 0, 0, 2), expand=False))


def _g(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") or "0"


def _term(t: dict[str, Any], per: str, sign: str = "+") -> str:
    if t["count"] == 0:
        return "-"
    text = f"{t['count']} x {_g(t[per])} = {sign}{_g(t['value'])}"
    return text + f" (capped at {_g(t['cap'])})" if t["capped"] else text


def _kept(score: dict[str, Any]) -> str:
    if not score["bonus_total"]:
        return "-"
    return f"{_g(score['bonus_scale'] * 100)}% = +{_g(score['bonus_scaled'])}"


def _clamp(score: dict[str, Any]) -> str:
    if score["clamp"] == "none":
        return "-"
    text = f"to {'max' if score['clamp'] == 'max' else 'min'} {_g(score['adjusted'])}"
    if score["bonus_erased"]:
        text += f", erased bonus {_g(score['bonus_erased'])}"
    if score["malus_erased"]:
        text += f", erased malus {_g(score['malus_erased'])}"
    return text


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
    for key, value in _flatten(rules.to_dict()):
        out.add_row(key, value)
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
# reference value; unknown keys are refused.
"""
_COMMENTS = {
    "name": "Name and version identify the rule set; every stored rating records name@version.",
    "initial_rating": "Rating of a player on first sight.",
    "rounding": '"half_even" (C# Math.Round, the reference) or "half_up": how the new rating is rounded.',
    "arithmetic": '"float32" computes bonus, malus and clamp in single precision exactly like the C# '
    'method;\n"float64" in double precision.',
    "k_factor": "K: how far one match can move a rating. A rating below tiers[i].below (and not below an\n"
    "earlier boundary) uses tiers[i].k; a boundary belongs to the higher tier. Ratings at or above\n"
    "the last boundary use top. Tiers must be sorted by 'below'.",
    "bonus": "Bonus per round won as a 16er (all 8 points), as a 24er (every trick) and with 4 and last\n"
    "(4:4 on points, last trick), each capped at its max_*. A losing player keeps loser_scale of\n"
    "their bonus; on a draw each player keeps draw_scale of theirs.",
    "malus": "Each bad move subtracts per_bad_move from the score, at most max in total.",
    "score": "base + bonus - malus is clamped to [min, max] (the adjusted score).",
    "update": "Rule variants of the update itself: zero_sum moves both sides by the same whole number of\n"
    "points in opposite directions; floor keeps every rating at or above it.",
    "teams": 'Two against two: a team\'s rating for the expected score is the "mean" or the "sum" of its\n'
    "players' ratings. Each player is then updated with their own K and statistics.",
}


def commented_toml(rules: Rules) -> str:
    """``rules.to_toml()`` with a header and a comment before each documented key or table.

    The comments are only added: the text reads back to rules equal to ``rules``. Keys without
    a comment here (new rule variants) are written all the same.
    """
    lines = [_HEADER]
    table = ""
    for line in rules.to_toml().splitlines():
        if line.startswith("["):
            key = table = line.strip("[]")
        else:  # keys inside a table are looked up as "table.key"
            key = (f"{table}." if table else "") + line.split(" = ", 1)[0]
        lines.extend(f"# {comment}" for comment in _COMMENTS.get(key, "").splitlines())
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
    """Rate ``matches`` in order from empty ratings: (ratings, matches played, results).

    A stand-in until the history/replay module lands; it must agree with it exactly.
    """
    ratings: dict[str, int] = {}
    played: dict[str, int] = {}
    results = []
    for match in matches:
        result = rate(match, ratings, rules)
        ratings.update(result.new_ratings)
        for pid in match.players:
            played[pid] = played.get(pid, 0) + 1
        results.append(result)
    return ratings, played, results


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
