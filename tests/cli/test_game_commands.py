"""The game commands: analyze (table and JSON), play, league, and clear errors for bad records."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sedma_elo.cli import app

EXAMPLE = Path(__file__).parents[2] / "src" / "sedma_elo" / "game" / "examples" / "example_match.json"
runner = CliRunner()


def test_analyze_json_prints_the_service_match_body() -> None:
    """--json --judge exact prints the hand-checked statistics of the example."""
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--json", "--judge", "exact"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["winner"] == "a" and body["player_a"] == "alice"
    assert body["stats"]["b"] == {"bad_moves": 1, "won_by_16": 0, "won_by_24": 0, "won_by_4_and_last": 1}


def test_analyze_json_details_prints_every_bad_move() -> None:
    """--json --details: bad_moves numbered from 1 with player id, played, better and cost."""
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--json", "--details", "--judge", "exact"])
    assert result.exit_code == 0, result.output
    moves = json.loads(result.stdout)["bad_moves"]
    assert [(m["round"], m["move"], m["player"], m["played"], m["better"]) for m in moves] == [
        (2, 27, "alice", "7c", ["stop"]),
        (3, 29, "bob", "Ts", ["7d"]),
    ]
    assert all(m["cost"].startswith("turned a won round into a lost one") for m in moves)


def test_analyze_table_lists_each_bad_move() -> None:
    """The default table shows the bad moves with played and best card."""
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--judge", "exact"])
    assert result.exit_code == 0, result.output
    assert "Bad moves" in result.stdout and "Ts" in result.stdout and "7d" in result.stdout


def test_analyze_refuses_an_invalid_record_naming_the_move(tmp_path: Path) -> None:
    """A card played by the wrong player: exit 1 and the move is named; nothing printed on stdout."""
    data = json.loads(EXAMPLE.read_text())
    data["rounds"][1]["moves"][3]["player"] = 1 - data["rounds"][1]["moves"][3]["player"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    result = runner.invoke(app, ["analyze", str(bad), "--json"])
    assert result.exit_code == 2
    assert "rounds[1].moves[3]" in result.stderr and "move 4 of round 2" in result.stderr
    assert result.stdout == ""


def test_analyze_reports_a_missing_file(tmp_path: Path) -> None:
    """An unreadable path is a clear error, not a traceback."""
    result = runner.invoke(app, ["analyze", str(tmp_path / "nope.json")])
    assert result.exit_code == 2 and "cannot read" in result.stderr


def test_play_writes_a_record_that_analyze_accepts(tmp_path: Path) -> None:
    """play then analyze --judge none round-trips through a file."""
    out = tmp_path / "g.json"
    assert (
        runner.invoke(
            app, ["play", str(out), "--bot-a", "random", "--bot-b", "greedy", "--seed", "3"]
        ).exit_code
        == 0
    )
    result = runner.invoke(app, ["analyze", str(out), "--json", "--judge", "none"])
    assert result.exit_code == 0 and json.loads(result.stdout)["winner"] in ("a", "b")


def test_league_command_writes_the_csv(tmp_path: Path) -> None:
    """league --matches 20 writes a header and 20 rows."""
    out = tmp_path / "h.csv"
    result = runner.invoke(app, ["league", str(out), "--matches", "20", "--seed", "2"])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines[0].startswith("match_id,played_at,player_a,player_b,winner") and len(lines) == 21
