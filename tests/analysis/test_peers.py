"""Peer systems: plain Elo, Glicko-2 (patched), TrueSkill, OpenSkill."""

from __future__ import annotations

import math
from datetime import datetime

import glicko2
import numpy as np
import pytest

from sedma_elo.analysis.metrics import chronological_split
from sedma_elo.analysis.peers import (
    FixedGlicko2Player,
    elo,
    glicko2_weekly,
    openskill_pl,
    trueskill_1vs1,
    tuned_elo,
)
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.core.model import Match

from .conftest import synthetic_matches

ALL = [elo(32), tuned_elo((16, 32)), glicko2_weekly(), trueskill_1vs1(), openskill_pl()]


def test_elo_two_matches_by_hand() -> None:
    """Elo K=32 from 1500: first match p=0.5, then ratings 1516/1484 give p=1/(1+10^(-32/400))."""
    t = table_from_matches(
        [Match.single("x", "y", "a"), Match.single("x", "y", "b"), Match.single("x", "z", "a")]
    )
    fc = elo(32)(t, chronological_split(3, 0.34, 0.0))
    assert fc.p[0] == 0.5
    assert fc.p[1] == pytest.approx(1 / (1 + 10 ** (-32 / 400)))
    e = fc.p[1]
    assert fc.rating_a[2] == pytest.approx(1516 - 32 * e)


@pytest.mark.parametrize("forecaster", ALL, ids=lambda f: f.__qualname__.split(".")[0])
def test_forecasts_do_not_peek(forecaster, small_history) -> None:  # type: ignore[no-untyped-def]
    """Flipping the result of match i leaves every forecast up to and including match i unchanged."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    base = forecaster(t, split).p
    i = split.valid_start - 50  # before the validation window, so tuned K cannot change either
    flipped = list(small_history)
    m = flipped[i]
    flipped[i] = Match.single(
        m.team_a[0], m.team_b[0], "b" if m.winner == "a" else "a", played_at=m.played_at
    )
    other = forecaster(table_from_matches(flipped), split).p
    # Glicko-2 updates at the end of a rating period: nothing before the period's end may change.
    np.testing.assert_array_equal(base[: i + 1], other[: i + 1])
    assert not np.array_equal(base, other)


@pytest.mark.parametrize("forecaster", ALL, ids=lambda f: f.__qualname__.split(".")[0])
def test_forecasts_are_probabilities(forecaster, small_history) -> None:  # type: ignore[no-untyped-def]
    """Every forecast is in (0, 1) and a strong player's wins become more likely over time."""
    t = table_from_matches(small_history)
    p = forecaster(t, chronological_split(len(t))).p
    assert np.all((p > 0) & (p < 1))


def test_tuned_elo_ignores_test_window(small_history) -> None:  # type: ignore[no-untyped-def]
    """The tuned K depends only on matches before the test window."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    k = tuned_elo()(t, split).params["k"]
    flipped = [
        Match.single(m.team_a[0], m.team_b[0], "b" if m.winner == "a" else "a", played_at=m.played_at)
        if i >= split.test_start
        else m
        for i, m in enumerate(small_history)
    ]
    assert tuned_elo()(table_from_matches(flipped), split).params["k"] == k


def _paper_player(cls: type) -> tuple[float, float, float]:
    p = cls(1500, 200, 0.06)
    p.update_player([1400, 1550, 1700], [30, 100, 300], [1, 0, 0])
    return p.rating, p.rd, p.vol


def test_glicko2_patched_reproduces_paper_example() -> None:
    """Glickman's worked example: 1464.06, RD 151.52, volatility 0.05999."""
    rating, rd, vol = _paper_player(FixedGlicko2Player)
    assert rating == pytest.approx(1464.06, abs=0.01)
    assert rd == pytest.approx(151.52, abs=0.01)
    assert vol == pytest.approx(0.05999, abs=1e-5)


def test_glicko2_volatility_translation_invariant() -> None:
    """Shifting every rating by +800 leaves the new volatility unchanged (the paper's update).

    The unpatched package uses mu^2 instead of phi^2 and fails this.
    """

    def vol(cls: type, shift: float) -> float:
        # ten surprising losses to a weaker player: the volatility should rise
        p = cls(1500 + shift, 50, 0.06)
        p.update_player([1100 + shift] * 10, [50] * 10, [0] * 10)
        return float(p.vol)

    assert vol(FixedGlicko2Player, 800) == pytest.approx(vol(FixedGlicko2Player, 0), rel=1e-9)
    assert vol(FixedGlicko2Player, 0) > 0.06
    assert vol(glicko2.Player, 800) != pytest.approx(vol(glicko2.Player, 0), rel=1e-2)


def test_glicko2_period_uses_start_ratings() -> None:
    """Two matches in the same week are both predicted from the ratings at the start of the week."""
    day = datetime(2024, 1, 1)  # a Monday; epoch day 19723 -> period boundary on Thursdays
    ms = [Match.single("x", "y", "a", played_at=day), Match.single("x", "y", "a", played_at=day)]
    ms.append(Match.single("x", "y", "a", played_at=datetime(2024, 1, 20)))
    t = table_from_matches(ms)
    p = glicko2_weekly()(t, chronological_split(3, 0.34, 0.0)).p
    assert p[0] == p[1] == 0.5
    assert p[2] > 0.5


def test_trueskill_first_match_even() -> None:
    """Two new TrueSkill players are predicted at exactly 0.5."""
    t = table_from_matches(synthetic_matches(5, 20))
    assert trueskill_1vs1()(t, chronological_split(20)).p[0] == pytest.approx(0.5)


def test_trueskill_formula() -> None:
    """After one win the winner's forecast is Phi(dmu / sqrt(2 beta^2 + s1^2 + s2^2)) computed by hand."""
    import trueskill

    env = trueskill.TrueSkill(draw_probability=0.0)
    w, l_ = trueskill.rate_1vs1(env.create_rating(), env.create_rating(), env=env)
    expected = 0.5 * (
        1 + math.erf((w.mu - l_.mu) / math.sqrt(2 * env.beta**2 + w.sigma**2 + l_.sigma**2) / math.sqrt(2))
    )
    t = table_from_matches([Match.single("x", "y", "a"), Match.single("x", "y", "a")])
    assert trueskill_1vs1(0.0)(t, chronological_split(2, 0.5, 0.0)).p[1] == pytest.approx(expected)


def test_tuned_picks_grid_point_with_lowest_validation_loss(small_history) -> None:  # type: ignore[no-untyped-def]
    """tuned() reports the grid point whose validation log loss, scored separately, is lowest."""
    from sedma_elo.analysis.metrics import score_forecasts
    from sedma_elo.analysis.peers import tuned

    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    window = slice(split.valid_start, split.test_start)
    losses = {k: score_forecasts(elo(k)(t, split).p[window], t.y[window]).log_loss for k in (4.0, 24.0, 96.0)}
    fc = tuned("elo", elo, [{"k": k} for k in losses])(t, split)
    assert fc.params["k"] == min(losses, key=losses.__getitem__)
