"""Bots play legal full matches of graded strength; the league writes a valid match history."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from sedma_elo.game.bots import GreedyBot, RandomBot, SamplingBot, make_bot, play_match
from sedma_elo.game.config import GameRules
from sedma_elo.game.league import CSV_COLUMNS, ROSTER, LeagueConfig, run_league, write_history_csv
from sedma_elo.game.record import dumps_record, loads_record, replay


@pytest.mark.parametrize("kinds", [("random", "greedy"), ("greedy", "sampling"), ("sampling", "random")])
def test_bots_play_legal_full_matches(kinds: tuple[str, str]) -> None:
    """The written record of a bot match passes the validator and reaches the target."""
    for seed in range(3):
        bots = [make_bot(kinds[0], seed, samples=3), make_bot(kinds[1], seed + 7, samples=3)]
        played = play_match(bots, ["x", "y"], seed)
        rep = replay(loads_record(dumps_record(played.record)))
        assert max(rep.match_points) >= 3 and rep.winner == played.winner


def test_four_player_bot_match_is_legal() -> None:
    """Two teams of two play a legal match."""
    rules = GameRules(players=4)
    played = play_match(
        [GreedyBot(), RandomBot(1), GreedyBot(), RandomBot(2)], ["a", "b", "c", "d"], 5, rules
    )
    assert replay(played.record).winner == played.winner


def test_greedy_beats_random_most_of_the_time() -> None:
    """Graded strength: greedy wins clearly more than half of 60 matches against random."""
    wins = sum(play_match([GreedyBot(), RandomBot(s)], ["g", "r"], s).winner == 0 for s in range(60))
    assert wins >= 45


def test_sampling_beats_greedy_more_often_than_not() -> None:
    """Graded strength: the sampling bot wins most of 20 matches against greedy (seats alternating)."""
    wins = 0
    for s in range(20):
        seat = s % 2
        bots = [GreedyBot(), GreedyBot()]
        bots[seat] = SamplingBot(4, s)  # type: ignore[call-overload]
        wins += play_match(bots, ["a", "b"], s).winner == seat
    assert wins >= 12


def _read(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as fh:  # type: ignore[operator]
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("name", ["league.csv", "league.csv.gz"])
def test_league_writes_the_project_csv(tmp_path: Path, name: str) -> None:
    """Every row has the project's columns, two roster players, a winner and non-negative counts."""
    path = tmp_path / name
    n = write_history_csv(path, run_league(LeagueConfig(matches=60, seed=1, sampling_share=0.05)))
    rows = _read(path)
    assert n == 60 and len(rows) == 60 and list(rows[0]) == list(CSV_COLUMNS)
    roster = {pid for pid, _ in ROSTER}
    for row in rows:
        assert row["player_a"] in roster and row["player_b"] in roster and row["player_a"] != row["player_b"]
        assert row["winner"] in ("a", "b")
        assert all(int(row[c]) >= 0 for c in CSV_COLUMNS[5:])
    assert [r["played_at"] for r in rows] == sorted(r["played_at"] for r in rows)
    assert len({r["match_id"] for r in rows}) == 60


def test_league_is_reproducible_from_its_seed(tmp_path: Path) -> None:
    """The same seed writes the same file."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    write_history_csv(a, run_league(LeagueConfig(matches=30, seed=4)))
    write_history_csv(b, run_league(LeagueConfig(matches=30, seed=4)))
    assert a.read_text() == b.read_text()


def test_league_without_bad_moves_counts_none(tmp_path: Path) -> None:
    """bad_moves='none' writes zero bad moves for everybody."""
    path = tmp_path / "l.csv"
    write_history_csv(path, run_league(LeagueConfig(matches=40, seed=2, bad_moves="none")))
    for row in _read(path):
        assert row["bad_moves_a"] == row["bad_moves_b"] == "0"


def test_failed_write_leaves_no_file(tmp_path: Path) -> None:
    """A failure while writing leaves neither the target nor a partial file."""

    def broken():  # type: ignore[no-untyped-def]
        yield from run_league(LeagueConfig(matches=2, seed=1))
        raise RuntimeError("boom")

    path = tmp_path / "out.csv"
    with pytest.raises(RuntimeError):
        write_history_csv(path, broken())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_four_player_league_writes_team_matches_as_json_lines(tmp_path: Path) -> None:
    """A four-player league seats four distinct roster bots, two a side, and reads back as team matches."""
    from sedma_elo.batch.history import read_matches

    path = tmp_path / "league4.jsonl"
    config = LeagueConfig(matches=8, seed=5, rules=GameRules(players=4), bad_moves="full")
    assert write_history_csv(path, run_league(config)) == 8
    matches, errors = read_matches(path)
    roster = {pid for pid, _ in ROSTER}
    assert not errors and len(matches) == 8
    for m in matches:
        assert len(m.team_a) == len(m.team_b) == 2 and set(m.players) <= roster and len(set(m.players)) == 4


def test_bad_moves_by_bot_sums_each_players_matches_wins_and_bad_moves() -> None:
    """The tally counts every match a bot sat in, its side's wins and its own bad moves."""
    from sedma_elo.core.model import Match, PlayerStats
    from sedma_elo.game.league import bad_moves_by_bot

    m1 = Match(("x",), ("y",), "a", {"x": PlayerStats(bad_moves=2), "y": PlayerStats(bad_moves=1)}, "m1")
    m2 = Match(("y",), ("x",), "a", {"x": PlayerStats(bad_moves=1)}, "m2")
    tally = bad_moves_by_bot([m1, m2])
    assert (tally["x"].matches, tally["x"].wins, tally["x"].bad_moves) == (2, 1, 3)
    assert (tally["y"].matches, tally["y"].wins, tally["y"].bad_per_match) == (2, 1, 0.5)
