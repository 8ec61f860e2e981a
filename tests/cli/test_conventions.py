"""Conventions all commands share: --version, --skip-bad, --rules, --out, choices, "error:" with status 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sedma_elo import __version__
from sedma_elo.batch.history import COLUMNS
from sedma_elo.cli import app

runner = CliRunner()
GOOD = ["m1,2024-01-01,ann,bob,a,0,1,1,0,0,0,0,0", "m2,2024-01-02,bob,cyd,b,0,0,0,0,0,1,0,0"]
BAD = "m3,2024-01-03,cyd,cyd,draw,0,0,0,0,0,0,0,0"


def _history(tmp_path: Path, rows: list[str], name: str = "history.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([",".join(COLUMNS), *rows]) + "\n", encoding="utf-8")
    return path


def _plain(text: str) -> str:
    """Help text without rich's colours and box drawing, on one line."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m|[│╭╮╰╯─]", " ", text).split())


def test_version_prints_the_package_version() -> None:
    """--version prints 'sedma-elo <version>' and exits 0."""
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"sedma-elo {__version__}"


def test_unknown_option_is_an_error_line_with_status_2() -> None:
    """A command-line mistake click finds is one 'error:' line on stderr, status 2, no box, no traceback."""
    result = runner.invoke(app, ["replay", "--no-such-option", "x.csv"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: No such option: --no-such-option")
    assert "Traceback" not in result.stderr and "╭" not in result.stderr


def test_replay_takes_skip_bad(tmp_path: Path) -> None:
    """replay --skip-bad leaves the bad row out, reports it and rates the rest."""
    out = tmp_path / "ratings.csv"
    result = runner.invoke(
        app, ["replay", str(_history(tmp_path, [*GOOD, BAD])), "--skip-bad", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "line 4: player_b" in result.stderr
    assert out.read_text().count("\n") == 4  # header and three players


def test_skip_bad_rows_still_works_but_is_not_shown(tmp_path: Path) -> None:
    """The old spelling --skip-bad-rows is accepted and hidden from replay's help."""
    out = tmp_path / "ratings.csv"
    args = ["replay", str(_history(tmp_path, [*GOOD, BAD])), "--skip-bad-rows", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    shown = _plain(runner.invoke(app, ["replay", "--help"]).stdout)
    assert "--skip-bad " in shown and "--skip-bad-rows" not in shown


@pytest.mark.parametrize(
    "command", [["replay"], ["import"], ["backtest"], ["tune", "--out", "x.toml"]], ids=lambda c: c[0]
)
def test_every_history_reader_offers_skip_bad(command: list[str]) -> None:
    """Each command that reads a history file lists --skip-bad in its help."""
    assert "--skip-bad" in _plain(runner.invoke(app, [command[0], "--help"]).stdout)


def test_ratings_out_alias_writes_what_out_writes(tmp_path: Path) -> None:
    """replay --ratings-out (old) and --out (new) write the same file."""
    history = _history(tmp_path, GOOD)
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    assert runner.invoke(app, ["replay", str(history), "--out", str(new)]).exit_code == 0
    assert runner.invoke(app, ["replay", str(history), "--ratings-out", str(old)]).exit_code == 0
    assert new.read_text() == old.read_text()


def test_replay_and_import_refuse_the_same_bad_id(tmp_path: Path) -> None:
    """A history with 'team/alice' is refused alike by replay and import: status 2, field and line named."""
    history = _history(tmp_path, ["m1,2024-01-01,team/alice,bob,a,0,0,0,0,0,0,0,0"])
    db = f"sqlite:///{tmp_path}/ledger.db"
    replayed = runner.invoke(app, ["replay", str(history)])
    imported = runner.invoke(app, ["import", str(history), "--database-url", db])
    for result in (replayed, imported):
        assert result.exit_code == 2
        assert "line 2: player_a: must not contain '/'" in result.stderr
        assert "Traceback" not in result.output


def test_unwritable_out_is_an_error_line(tmp_path: Path) -> None:
    """An --out path that cannot be written is 'error: cannot ...' with status 2, not a traceback."""
    result = runner.invoke(app, ["replay", str(_history(tmp_path, GOOD)), "--out", "/proc/nope/r.csv"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: cannot write /proc/nope/r.csv")


def test_os_errors_anywhere_end_as_an_error_line(tmp_path: Path) -> None:
    """A file error in a command without its own handling is caught once, naming the file."""
    result = runner.invoke(app, ["play", "--out", "/proc/nope/game.json", "--bot-b", "greedy"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: cannot open /proc/nope/game.json:")


def test_play_and_league_take_out(tmp_path: Path) -> None:
    """play and league write to --out as they do to their positional OUT."""
    record = tmp_path / "game.json"
    assert runner.invoke(app, ["play", "--out", str(record), "--bot-b", "greedy"]).exit_code == 0
    assert json.loads(record.read_text())["format"].startswith("sedma-game")
    history = tmp_path / "league.csv"
    result = runner.invoke(app, ["league", "--out", str(history), "--matches", "5", "--sampling-share", "0"])
    assert result.exit_code == 0, result.output
    assert history.read_text().count("\n") == 6


def test_out_and_positional_that_differ_are_refused(tmp_path: Path) -> None:
    """Giving the positional OUT and a different --out is a mistake, not a silent choice."""
    result = runner.invoke(app, ["play", str(tmp_path / "a.json"), "--out", str(tmp_path / "b.json")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --out: give it once")


def test_bot_choices_are_listed_and_enforced() -> None:
    """play --bot-a shows its choices in help and refuses another value naming them."""
    assert "random|greedy|sampling" in _plain(runner.invoke(app, ["play", "--help"]).stdout).replace(" ", "")
    result = runner.invoke(app, ["play", "--out", "x.json", "--bot-a", "genius"])
    assert result.exit_code == 2
    assert "'genius' is not one of 'random', 'greedy', 'sampling'" in result.stderr


def test_scope_choices_are_listed_and_enforced(tmp_path: Path) -> None:
    """keys create --scope shows games|write|admin and refuses anything else before touching a database."""
    assert "games|write|admin" in _plain(runner.invoke(app, ["keys", "create", "--help"]).stdout).replace(
        " ", ""
    )
    db = tmp_path / "ledger.db"
    result = runner.invoke(app, ["keys", "create", "--scope", "root", "--database-url", f"sqlite:///{db}"])
    assert result.exit_code == 2
    assert "'root' is not one of 'games', 'write', 'admin'" in result.stderr
    assert not db.exists()


def test_rules_show_takes_rules_option_like_its_argument(tmp_path: Path) -> None:
    """rules show --rules FILE prints what rules show FILE prints."""
    rules = tmp_path / "r.toml"
    assert runner.invoke(app, ["rules", "init", "--out", str(rules)]).exit_code == 0
    by_option = runner.invoke(app, ["rules", "show", "--rules", str(rules)])
    by_argument = runner.invoke(app, ["rules", "show", str(rules)])
    assert by_option.exit_code == 0 and by_option.stdout == by_argument.stdout


def test_simulate_out_is_the_saved_run(tmp_path: Path) -> None:
    """simulate --out writes the run JSON that --save used to write (the input of report)."""
    run = tmp_path / "sim.json"
    args = ["simulate", "--players", "10", "--founders", "8", "--matches", "200", "--out", str(run)]
    assert runner.invoke(app, args).exit_code == 0
    assert json.loads(run.read_text())["kind"] == "simulate"
