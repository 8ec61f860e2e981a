"""The ``sedma-elo replay`` command, driven through typer's CliRunner."""

from __future__ import annotations

import csv
from pathlib import Path

from typer.testing import CliRunner

from sedma_elo import Match, PlayerStats, rate
from sedma_elo.batch.history import COLUMNS
from sedma_elo.cli import app

runner = CliRunner()
ROWS = [
    "m1,2024-01-01,ann,bob,a,0,1,1,0,0,0,0,0",
    "m2,2024-01-02,bob,cyd,b,0,0,0,0,0,1,0,0",
    "m3,2024-01-03,cyd,ann,draw,0,0,0,0,0,0,0,0",
]


def _history(tmp_path: Path, rows: list[str] = ROWS) -> Path:
    path = tmp_path / "history.csv"
    path.write_text("\n".join([",".join(COLUMNS), *rows]) + "\n")
    return path


def _expected_by_hand() -> dict[str, int]:
    """The same three matches applied one by one with rate()."""
    matches = [
        Match.single("ann", "bob", "a", PlayerStats(won_by_16=1), PlayerStats(bad_moves=1)),
        Match.single("bob", "cyd", "b", PlayerStats(), PlayerStats(won_by_24=1)),
        Match.single("cyd", "ann", "draw"),
    ]
    ratings: dict[str, int] = {}
    for m in matches:
        ratings.update(rate(m, ratings).new_ratings)
    return ratings


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_writes_ratings_sorted(tmp_path: Path) -> None:
    """--ratings-out holds every player, highest rating first, with matches played."""
    out = tmp_path / "ratings.csv"
    result = runner.invoke(app, ["replay", str(_history(tmp_path)), "--ratings-out", str(out)])
    assert result.exit_code == 0, result.output
    rows = _read(out)
    expected = _expected_by_hand()
    assert {r["player_id"]: int(r["rating"]) for r in rows} == expected
    assert [int(r["rating"]) for r in rows] == sorted(expected.values(), reverse=True)
    assert all(r["matches_played"] == "2" for r in rows)


def test_changes_out_has_two_rows_a_match(tmp_path: Path) -> None:
    """--changes-out lists match_id, player, before, after and delta for both players of each match."""
    ratings, changes = tmp_path / "r.csv", tmp_path / "c.csv"
    args = ["replay", str(_history(tmp_path)), "--ratings-out", str(ratings), "--changes-out", str(changes)]
    assert runner.invoke(app, args).exit_code == 0
    rows = _read(changes)
    assert [r["match_id"] for r in rows] == ["m1", "m1", "m2", "m2", "m3", "m3"]
    assert rows[0]["player"] == "ann" and rows[0]["before"] == "1000"
    assert all(int(r["after"]) - int(r["before"]) == int(r["delta"]) for r in rows)
    assert rows[-1]["after"] == str(_expected_by_hand()["ann"])


def test_bad_row_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    """A bad row prints the field and line, exits with code 2 and writes no output file."""
    out = tmp_path / "ratings.csv"
    path = _history(tmp_path, [*ROWS, "m4,2024-01-04,ann,bob,a,0,0,-1,0,0,0,0,0"])
    result = runner.invoke(app, ["replay", str(path), "--ratings-out", str(out)])
    assert result.exit_code == 2
    assert "line 5" in result.output and "won_by_16_a" in result.output
    assert not out.exists()


def test_skip_bad_rows_reports_and_continues(tmp_path: Path) -> None:
    """--skip-bad-rows reports each bad row and rates the others."""
    out = tmp_path / "ratings.csv"
    path = _history(tmp_path, [*ROWS, "m4,2024-01-04,ann,ann,a,0,0,0,0,0,0,0,0"])
    result = runner.invoke(app, ["replay", str(path), "--ratings-out", str(out), "--skip-bad-rows"])
    assert result.exit_code == 0
    assert "line 5" in result.output and "player_b" in result.output
    assert {r["player_id"]: int(r["rating"]) for r in _read(out)} == _expected_by_hand()


def test_rules_file_changes_the_result(tmp_path: Path) -> None:
    """--rules reads a TOML rule set (here every K is 10) and uses it."""
    rules = tmp_path / "rules.toml"
    rules.write_text('name = "flat"\n[k_factor]\ntiers = []\ntop = 10\n')
    out = tmp_path / "r.csv"
    path = _history(tmp_path, ROWS[:1])
    assert (
        runner.invoke(app, ["replay", str(path), "--ratings-out", str(out), "--rules", str(rules)]).exit_code
        == 0
    )
    # By hand: equal ratings, K 10, winner scores 1 -> +5; loser 0 - 0.02 malus clamps to 0 -> -5.
    assert {r["player_id"]: r["rating"] for r in _read(out)} == {"ann": "1005", "bob": "995"}


def test_bad_rules_file_exits_2(tmp_path: Path) -> None:
    """An invalid rules key is reported by name with exit code 2."""
    rules = tmp_path / "rules.toml"
    rules.write_text("[k_factor]\nmode = 'sometimes'\n")
    result = runner.invoke(app, ["replay", str(_history(tmp_path)), "--rules", str(rules)])
    assert result.exit_code == 2
    assert "k_factor.mode" in result.output


def test_missing_file_exits_2(tmp_path: Path) -> None:
    """A history path that does not exist is an error, exit code 2."""
    result = runner.invoke(app, ["replay", str(tmp_path / "nope.csv")])
    assert result.exit_code == 2
    assert "cannot read" in result.output


def test_without_ratings_out_prints_a_table(tmp_path: Path) -> None:
    """Without --ratings-out the top players are printed."""
    result = runner.invoke(app, ["replay", str(_history(tmp_path)), "--top", "2"])
    assert result.exit_code == 0
    best = max(_expected_by_hand().items(), key=lambda kv: kv[1])[0]
    assert best in result.output


def test_progress_flag_draws_on_stderr(tmp_path: Path) -> None:
    """--progress shows the phases even when not on a terminal."""
    result = runner.invoke(app, ["replay", str(_history(tmp_path)), "--progress", "--top", "1"])
    assert result.exit_code == 0
    assert "replaying" in result.output


def test_team_history_in_jsonl(tmp_path: Path) -> None:
    """A JSON Lines history with a 2-vs-2 match is replayed with rate()."""
    path = tmp_path / "teams.jsonl"
    path.write_text(
        '{"match_id": "t1", "played_at": "2024-01-01", "team_a": ["ann", "bob"], "team_b": ["cyd", "dan"],'
        ' "winner": "a"}\n'
    )
    out = tmp_path / "r.csv"
    result = runner.invoke(app, ["replay", str(path), "--ratings-out", str(out)])
    assert result.exit_code == 0, result.output
    team = Match(("ann", "bob"), ("cyd", "dan"), "a", {})
    assert {r["player_id"]: int(r["rating"]) for r in _read(out)} == rate(team, {}).new_ratings
