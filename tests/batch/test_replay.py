"""replay(): sources, starting points, records, and the real ATP history."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from needs import require_atp
from sedma_elo import REFERENCE_RULES, HistoryError, Match, PlayerStats, ValidationError, rate
from sedma_elo.batch.history import HistoryArrays, load_history, write_matches
from sedma_elo.batch.replay import replay, replay_python


def _history(n: int = 300, seed: int = 1) -> list[Match]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        a, b = rng.choice(12, size=2, replace=False).tolist()
        winner = ("a", "b", "draw")[int(rng.integers(0, 3))]
        c = rng.integers(0, 3, size=8).tolist()
        out.append(
            Match.single(
                f"p{a}",
                f"p{b}",
                winner,  # type: ignore[arg-type]
                PlayerStats(*c[:4]),
                PlayerStats(*c[4:]),
                match_id=f"m{i}",
                played_at=datetime(2024, 1, 1, i // 60, i % 60),
            )
        )
    return out


def test_file_arrays_and_matches_give_the_same_ratings(tmp_path: Path) -> None:
    """A history replayed from its file, its arrays and its Match list ends with the same ratings."""
    matches = _history()
    path = tmp_path / "h.csv.gz"
    write_matches(path, matches)
    expected, _ = replay_python(matches)
    assert replay(path, method="kernel").ratings == expected
    assert replay(load_history(path)[0], method="python").ratings == expected
    assert replay(matches).ratings == expected


def test_matches_played_counts_each_appearance() -> None:
    """matches_played is the number of matches a player appeared in."""
    matches = _history(50)
    counts: dict[str, int] = {}
    for m in matches:
        for p in m.players:
            counts[p] = counts.get(p, 0) + 1
    assert replay(matches, method="kernel").matches_played == counts


def test_table_is_sorted_by_rating_then_id() -> None:
    """table() lists players by rating, highest first, ties by player id."""
    result = replay([Match.single("b", "a", "draw"), Match.single("d", "c", "a")], method="kernel")
    rows = result.table()
    assert rows == sorted(rows, key=lambda r: (-r[1], r[0]))
    assert [r[0] for r in rows[:1]] == ["d"]


def test_initial_ratings_are_the_starting_point() -> None:
    """Given starting ratings, the first match is rated from them, and unseen given players are kept."""
    result = replay([Match.single("x", "y", "a")], initial_ratings={"x": 1500, "y": 1400, "z": 1234})
    direct = rate(Match.single("x", "y", "a"), {"x": 1500, "y": 1400}).new_ratings
    assert result.ratings == {**direct, "z": 1234}
    assert result.matches_played["z"] == 0


def test_initial_games_played_feed_k_by_games() -> None:
    """With K by games played, games played before the replay lower K as the curve says."""
    rules = REFERENCE_RULES.replace(k_mode="games", k_games_a=100.0, k_games_b=1.0, k_games_c=1.0)
    match = Match.single("x", "y", "a")
    fresh = replay([match], rules, method="kernel").ratings["x"]
    veteran = replay([match], rules, initial_games_played={"x": 9}, method="kernel")
    # By hand: K = 100 / (0 + 1) = 100 -> +50; K = 100 / (9 + 1) = 10 -> +5.
    assert fresh == 1050
    assert veteran.ratings["x"] == 1005
    assert veteran.games_played["x"] == 10 and veteran.matches_played["x"] == 1


def test_record_holds_before_after_and_expected() -> None:
    """record=True gives every match's ratings before and after and its expected scores."""
    matches = _history(40)
    result = replay(matches, record=True, method="kernel")
    assert result.record is not None
    current: dict[str, int] = {}
    for i, m in enumerate(matches):
        r = rate(m, current)
        assert result.record.before[i].tolist() == [c.rating_before for c in r.changes]
        assert result.record.after[i].tolist() == [c.rating_after for c in r.changes]
        assert result.record.expected[i].tolist() == [c.expected for c in r.changes]
        current.update(r.new_ratings)


def test_team_matches_use_the_python_path() -> None:
    """A history with a 2-vs-2 match is replayed with rate; a per-match record is refused."""
    team = Match(("a", "b"), ("c", "d"), "a", {})
    matches = [Match.single("a", "c", "b"), team]
    assert replay(matches).ratings == replay_python(matches)[0]
    with pytest.raises(ValidationError, match="team"):
        replay(matches, record=True)


def test_bad_initial_rating_names_the_player() -> None:
    """An out-of-range starting rating is refused, naming the player."""
    with pytest.raises(ValidationError) as caught:
        replay([Match.single("a", "b", "a")], initial_ratings={"a": 10**9})
    assert caught.value.field == "initial_ratings.a"


def test_progress_reaches_the_total() -> None:
    """The progress callback ends with (total, total)."""
    calls: list[tuple[int, int]] = []
    replay(_history(30), method="kernel", progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (30, 30)


@pytest.fixture(scope="module")
def atp() -> tuple[HistoryArrays, list[HistoryError]]:
    """The ATP history, read once for this module (bad rows skipped and returned)."""
    return load_history(require_atp(), skip_bad=True)


def test_atp_file_has_four_self_play_rows(atp: tuple[HistoryArrays, list[HistoryError]]) -> None:
    """The real file's 603,321 rows include four where a player meets themself."""
    history, errors = atp
    assert len(history) + len(errors) == 603_321
    assert [e.field for e in errors] == ["player_b"] * 4


def test_atp_replay_mean_drifts_to_991(atp: tuple[HistoryArrays, list[HistoryError]]) -> None:
    """Replaying the ATP file under the reference rules ends with a mean of 991 (the issue's figure)."""
    result = replay(atp[0], method="kernel")
    assert round(float(np.mean(result.rating_array))) == 991


def test_atp_zero_sum_keeps_the_mean(atp: tuple[HistoryArrays, list[HistoryError]]) -> None:
    """In the zero-sum mode the ATP replay keeps the mean rating at exactly 1000."""
    history = atp[0]
    result = replay(history, REFERENCE_RULES.replace(zero_sum=True), method="kernel")
    assert int(result.rating_array.sum()) == 1000 * history.n_players
