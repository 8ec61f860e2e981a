"""`rate --rules` and `replay --rules` with the tuned rule sets in docs/ (K by games played)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sedma_elo import Match, PlayerStats, load_rules
from sedma_elo.batch.history import COLUMNS
from sedma_elo.cli import app
from sedma_elo.core.fold import RatingState, fold

DOCS = Path(__file__).resolve().parents[2] / "docs"
TUNED = [
    DOCS / "atp_tuned_rules.toml",
    DOCS / "atp_tuned_zero_sum_rules.toml",
    DOCS / "atp_fair_tuned_v4_rules.toml",
    DOCS / "atp_fair_tuned_v4_balanced_rules.toml",
    DOCS / "atp_fair_tuned_v4_balanced_eras_rules.toml",
    DOCS / "atp_fair_tuned_v5_rules.toml",
]
runner = CliRunner()


@pytest.mark.parametrize("path", TUNED, ids=lambda p: p.name)
def test_rate_with_tuned_rules_takes_games_played(path: Path) -> None:
    """`rate --rules` rates with K by games played: --games-a/--games-b, 0 when not given."""
    base = ["rate", "--rules", str(path), "--player-a", "x", "--player-b", "y", "--winner", "a", "--json"]
    rules = load_rules(path)
    for extra, games in (([], {}), (["--games-a", "30", "--games-b", "2"], {"x": 30, "y": 2})):
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
        players = json.loads(result.stdout)["players"]
        expected = RatingState.of({}, games).rate(Match.single("x", "y", "a"), rules)
        assert [p["rating_after"] for p in players] == [c.rating_after for c in expected.changes]
        assert [p["games_played"] for p in players] == [games.get("x", 0), games.get("y", 0)]


def test_rate_games_flag_counts_players() -> None:
    """--games-a given twice for a one-player side is refused naming the flag."""
    args = ["rate", "--player-a", "x", "--player-b", "y", "--winner", "a", "--games-a", "1", "--games-a", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "--games-a" in result.stderr


@pytest.mark.parametrize("path", TUNED, ids=lambda p: p.name)
def test_replay_with_tuned_rules_equals_the_fold(path: Path, tmp_path: Path) -> None:
    """`replay --rules` with a tuned file writes the ratings the fold computes."""
    history = tmp_path / "history.csv"
    rows = ["m1,2024-01-01,ann,bob,a,0,1,1,0,0,0,0,0", "m2,2024-01-02,bob,cyd,b,0,0,0,0,0,1,0,0"]
    history.write_text("\n".join([",".join(COLUMNS), *rows]) + "\n")
    out = tmp_path / "ratings.csv"
    result = runner.invoke(app, ["replay", str(history), "--rules", str(path), "--ratings-out", str(out)])
    assert result.exit_code == 0, result.output
    matches = [
        Match.single("ann", "bob", "a", PlayerStats(won_by_16=1), PlayerStats(bad_moves=1)),
        Match.single("bob", "cyd", "b", PlayerStats(), PlayerStats(won_by_24=1)),
    ]
    with out.open(newline="") as fh:
        got = {r["player_id"]: int(r["rating"]) for r in csv.DictReader(fh)}
    state = RatingState()
    for _ in fold(matches, load_rules(path), state):
        pass
    assert got == state.ratings


def test_rate_match_file_with_tuned_rules_and_games(tmp_path: Path) -> None:
    """`rate --match FILE --rules` (a 2v2 under K by games played) takes --games-a/--games-b per player."""
    path = tmp_path / "match.json"
    body = {"team_a": ["w", "x"], "team_b": ["y", "z"], "winner": "b", "ratings": {"w": 1500, "y": 1400}}
    path.write_text(json.dumps(body))
    rules_path = TUNED[0]
    args = ["rate", "--match", str(path), "--rules", str(rules_path), "--json"]
    result = runner.invoke(
        app, [*args, "--games-a", "3", "--games-a", "40", "--games-b", "0", "--games-b", "7"]
    )
    assert result.exit_code == 0, result.output
    games = {"w": 3, "x": 40, "y": 0, "z": 7}
    match = Match(("w", "x"), ("y", "z"), "b", {})
    expected = RatingState.of({"w": 1500, "y": 1400}, games).rate(match, load_rules(rules_path))
    players = json.loads(result.stdout)["players"]
    assert {p["player_id"]: p["rating_after"] for p in players} == expected.new_ratings
