"""The tune -> deploy loop: the tuned rule sets in docs/ (K by games played) rate and replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from sedma_elo import Match, PlayerStats, load_rules, rate
from sedma_elo.batch.replay import replay
from sedma_elo.core.fold import RatingState, fold

DOCS = Path(__file__).resolve().parents[2] / "docs"
TUNED = sorted(DOCS.glob("*tuned*rules.toml"))
MATCHES = [
    Match.single("ann", "bob", "a", PlayerStats(won_by_16=2), PlayerStats(bad_moves=1), match_id="m1"),
    Match.single("bob", "cyd", "b", PlayerStats(), PlayerStats(won_by_24=1), match_id="m2"),
    Match.single("cyd", "ann", "draw", match_id="m3"),
    Match.single("ann", "bob", "b", PlayerStats(won_by_4_and_last=1), PlayerStats(), match_id="m4"),
]


def test_both_tuned_files_are_found() -> None:
    """docs/ holds the plain, ten fair and the zero-sum tuned rule sets; each computes K by games played."""
    assert [p.name for p in TUNED] == [
        "atp_fair_tuned_eras_rules.toml",
        "atp_fair_tuned_margin_rules.toml",
        "atp_fair_tuned_rules.toml",
        "atp_fair_tuned_v1_rules.toml",
        "atp_fair_tuned_v3_rules.toml",
        "atp_fair_tuned_v4_balanced_eras_rules.toml",
        "atp_fair_tuned_v4_balanced_rules.toml",
        "atp_fair_tuned_v4_rules.toml",
        "atp_fair_tuned_v5_rules.toml",
        "atp_fair_tuned_v6_rules.toml",
        "atp_tuned_rules.toml",
        "atp_tuned_zero_sum_rules.toml",
    ]
    assert all(load_rules(p).uses_games_played for p in TUNED)


def test_tuned_rules_first_match_by_hand() -> None:
    """atp_tuned_rules.toml, two new players, a plain win: K = 48 (tier) x 1.7214369974011468 (new) x 1."""
    rules = load_rules(DOCS / "atp_tuned_rules.toml")
    result = rate(Match.single("x", "y", "a"), {}, rules, games_played={})
    k = 48 * 1.7214369974011468
    assert result["x"].rating_after == round(1433 + k * (1.0 - 0.5))
    assert result["y"].rating_after == round(1433 + k * (0.0 - 0.5))


@pytest.mark.parametrize("path", TUNED, ids=lambda p: p.name)
def test_tuned_rules_replay_equals_the_fold(path: Path) -> None:
    """replay() with the tuned rules, by the kernel and by the Python path, ends where the fold ends."""
    rules = load_rules(path)
    state = RatingState()
    for _ in fold(MATCHES, rules, state):
        pass
    for method in ("kernel", "python"):
        assert replay(MATCHES, rules, method=method).ratings == state.ratings  # type: ignore[arg-type]
