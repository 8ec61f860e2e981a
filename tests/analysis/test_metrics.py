"""Forecast metrics and the chronological split."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.analysis.metrics import (
    Split,
    calibration_table,
    chronological_split,
    paired_bootstrap,
    player_bootstrap,
    score_forecasts,
)
from sedma_elo.errors import ValidationError


def test_log_loss_by_hand() -> None:
    """Log loss is the mean negative log-likelihood of the outcomes."""
    m = score_forecasts([0.8, 0.3], [1.0, 1.0])
    assert m.log_loss == pytest.approx(-(math.log(0.8) + math.log(0.3)) / 2)


def test_draw_counts_half_in_log_loss_and_brier() -> None:
    """A draw is a 0.5 outcome: log loss -(ln p + ln(1-p))/2, Brier (p - 0.5)^2."""
    m = score_forecasts([0.7], [0.5])
    assert m.log_loss == pytest.approx(-(math.log(0.7) + math.log(0.3)) / 2)
    assert m.brier == pytest.approx(0.04)


def test_draws_excluded_from_accuracy() -> None:
    """Accuracy is over decided matches only; n_draws counts the rest."""
    m = score_forecasts([0.9, 0.2, 0.6, 0.6], [1.0, 1.0, 0.5, 0.5])
    assert m.accuracy == 0.5
    assert m.n_draws == 2
    assert m.n_test == 4


def test_accuracy_none_when_all_draws() -> None:
    """With only draws there is no accuracy to report (None, not NaN)."""
    assert score_forecasts([0.6], [0.5]).accuracy is None


def test_log_loss_clips_certain_misses() -> None:
    """A forecast of exactly 0 for a win costs -ln(1e-15), not infinity."""
    m = score_forecasts([0.0], [1.0])
    assert m.log_loss == pytest.approx(-math.log(1e-15))


def test_brier_by_hand() -> None:
    """Brier score is the mean squared error of the probability."""
    assert score_forecasts([0.8, 0.4], [1.0, 0.0]).brier == pytest.approx((0.04 + 0.16) / 2)


def test_calibration_bins_by_hand() -> None:
    """Each bin holds the mean forecast and mean outcome of the forecasts that fall in it."""
    table = calibration_table(np.array([0.05, 0.15, 0.12, 1.0]), np.array([0.0, 1.0, 0.0, 1.0]), bins=10)
    assert [(b.low, b.count) for b in table] == [(0.0, 1), (pytest.approx(0.1), 2), (pytest.approx(0.9), 1)]
    assert table[1].mean_predicted == pytest.approx(0.135)
    assert table[1].mean_observed == 0.5


def test_empty_forecasts_are_an_error() -> None:
    """No matches to score is a ValidationError, not a NaN."""
    with pytest.raises(ValidationError, match="history"):
        score_forecasts([], [])


def test_forecast_outside_unit_interval_refused() -> None:
    """A forecast above 1 names the field p."""
    with pytest.raises(ValidationError, match=r"^p:"):
        score_forecasts([1.5], [1.0])


def test_split_sizes() -> None:
    """1000 matches: the last 300 are the test window and the 200 before them validation."""
    s = chronological_split(1000, 0.3, 0.2)
    assert (s.valid_start, s.test_start, s.n_test, s.n_valid) == (500, 700, 300, 200)


def test_split_too_short_history() -> None:
    """Two matches cannot hold warm-up, validation and test windows."""
    with pytest.raises(ValidationError, match="too few"):
        chronological_split(2, 0.3, 0.2)


def test_split_bad_fraction() -> None:
    """A test fraction of 1 is refused, naming the field."""
    with pytest.raises(ValidationError, match="test_fraction"):
        chronological_split(100, 1.0)


def test_split_windows_are_the_nearest_whole_numbers_of_matches() -> None:
    """100 matches at 25.7% and 12.3%: a test window of 26 and a validation window of 12 before it."""
    assert chronological_split(100, 0.257, 0.123) == Split(100, 62, 74)


def test_split_without_validation_window() -> None:
    """A validation fraction of 0 is allowed: no validation window, the test window right after warm-up."""
    assert chronological_split(10, 0.3, 0.0) == Split(10, 7, 7)


def test_split_of_one_match_per_window_is_allowed() -> None:
    """Three matches can hold one warm-up, one validation and one test match."""
    assert chronological_split(3, 0.34, 0.33) == Split(3, 1, 2)


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.0, 1.5])
def test_split_refuses_a_test_fraction_outside_the_open_unit_interval(fraction: float) -> None:
    """A test fraction of 0, below 0, 1 or above is refused on the field test_fraction, saying (0, 1)."""
    with pytest.raises(ValidationError) as caught:
        chronological_split(100, fraction, 0.0)
    assert caught.value.field == "test_fraction"
    assert f"(0, 1), got {fraction}" in caught.value.reason


@pytest.mark.parametrize("fraction", [-0.1, 1.0, 1.5])
def test_split_refuses_a_validation_fraction_outside_zero_to_one(fraction: float) -> None:
    """A validation fraction below 0, of 1 or above is refused on the field valid_fraction, saying [0, 1)."""
    with pytest.raises(ValidationError) as caught:
        chronological_split(100, 0.3, fraction)
    assert caught.value.field == "valid_fraction"
    assert f"[0, 1), got {fraction}" in caught.value.reason


@pytest.mark.parametrize(("test", "valid"), [(0.6, 0.4), (0.5, 0.5), (0.7, 0.5)])
def test_split_refuses_fractions_that_leave_no_warm_up(test: float, valid: float) -> None:
    """Test and validation fractions adding up to 1 or more are refused on valid_fraction, giving the sum."""
    with pytest.raises(ValidationError) as caught:
        chronological_split(5, test, valid)
    assert caught.value.field == "valid_fraction"
    assert caught.value.reason.startswith("test_fraction + valid_fraction must be below 1")
    assert caught.value.reason.endswith(f"got {test + valid}")


@pytest.mark.parametrize(
    ("test", "valid", "windows"),
    [(0.3, 0.2, "a 30% test window and a 20% validation window"), (0.2, 0.0, "a 20% test window")],
)
def test_split_too_short_names_the_windows_asked_for(test: float, valid: float, windows: str) -> None:
    """Two matches are refused on the field history, naming the windows asked for and the warm-up."""
    with pytest.raises(ValidationError) as caught:
        chronological_split(2, test, valid)
    assert caught.value.field == "history"
    assert caught.value.reason == (
        f"2 matches are too few for {windows}"
        " with at least one match in each and one warm-up match before them"
    )


@given(st.integers(min_value=10, max_value=10**7), st.floats(0.05, 0.5), st.floats(0.0, 0.4))
def test_split_windows_ordered(n: int, test: float, valid: float) -> None:
    """Warm-up, validation and test windows are non-empty, ordered and cover the history."""
    try:
        s = chronological_split(n, test, valid)
    except ValidationError:
        return
    assert 1 <= s.valid_start <= s.test_start < s.n == n
    assert s.n_test >= 1


@given(
    st.lists(st.tuples(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=50),
)
def test_scores_bounded_and_perfect_forecast_best(pairs: list[tuple[float, float]]) -> None:
    """Brier is in [0, 1], log loss >= 0, and forecasting the outcome itself never scores worse."""
    p = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    m = score_forecasts(p, y)
    best = score_forecasts(y, y)
    assert 0.0 <= m.brier <= 1.0
    assert m.log_loss >= 0.0
    assert best.brier <= m.brier
    assert best.log_loss <= m.log_loss + 1e-12


def test_bootstrap_of_identical_forecasts_is_zero() -> None:
    """Two identical systems differ by exactly 0 in every resample."""
    p = np.linspace(0.1, 0.9, 50)
    y = (np.arange(50) % 2).astype(float)
    d = paired_bootstrap(p, p, y, resamples=100)
    assert (d.mean, d.low, d.high) == (0.0, 0.0, 0.0)


def test_bootstrap_interval_excludes_zero_for_a_clearly_better_system() -> None:
    """A system that is right where a coin flip is not has an interval entirely below 0."""
    y = (np.arange(400) % 2).astype(float)
    good = np.where(y == 1.0, 0.8, 0.2)
    d = paired_bootstrap(good, np.full(400, 0.5), y, resamples=300, seed=3)
    assert d.high < 0.0
    assert d.mean == pytest.approx(math.log(0.8) * -1 - math.log(2))


def test_bootstrap_is_reproducible_and_checks_arguments() -> None:
    """The same seed gives the same interval; resamples below 1 are refused by name."""
    rng = np.random.default_rng(0)
    p, q = rng.random(100), rng.random(100)
    y = (rng.random(100) < 0.5).astype(float)
    assert paired_bootstrap(p, q, y, seed=5) == paired_bootstrap(p, q, y, seed=5)
    with pytest.raises(ValidationError, match="resamples"):
        paired_bootstrap(p, q, y, resamples=0)


def test_block_bootstrap_widens_the_interval_of_runs() -> None:
    """Differences that come in runs of 50 matches get a much wider interval with blocks of 50."""
    y = np.ones(2000)
    p = np.where((np.arange(2000) // 50) % 2 == 0, 0.7, 0.35)
    reference = np.full(2000, 0.5)
    single = paired_bootstrap(p, reference, y, resamples=400, seed=1)
    runs = paired_bootstrap(p, reference, y, resamples=400, seed=1, block=50)
    assert runs.mean == single.mean
    assert runs.low <= runs.mean <= runs.high
    assert runs.high - runs.low > 3 * (single.high - single.low)


def test_block_bootstrap_checks_its_block() -> None:
    """A block below 1 is refused by name; a block longer than the matches is one whole run."""
    y = np.ones(10)
    with pytest.raises(ValidationError, match="block"):
        paired_bootstrap(np.full(10, 0.6), np.full(10, 0.5), y, block=0)
    whole = paired_bootstrap(np.full(10, 0.6), np.full(10, 0.5), y, block=100, resamples=20)
    assert whole.low == pytest.approx(whole.high) == pytest.approx(math.log(0.5) - math.log(0.6))


def _one_player_matters(n: int = 2000, players: int = 40) -> tuple[np.ndarray, ...]:
    """Matches where the system beats the reference only in player 0's matches (a cluster)."""
    rng = np.random.default_rng(2)
    a = rng.integers(0, players, n)
    b = (a + rng.integers(1, players, n)) % players
    y = np.ones(n)
    p = np.where((a == 0) | (b == 0), 0.9, 0.5)
    return p, np.full(n, 0.5), y, a, b


def test_player_bootstrap_widens_the_interval_of_one_players_matches() -> None:
    """A difference carried by one player's matches gets a far wider interval when players are resampled."""
    p, reference, y, a, b = _one_player_matters()
    by_match = paired_bootstrap(p, reference, y, resamples=400, seed=1)
    by_player = player_bootstrap(p, reference, y, a, b, resamples=400, seed=1)
    assert by_player.mean == by_match.mean and by_player.unit == "player"
    assert by_player.low <= by_player.mean <= by_player.high
    assert by_player.high - by_player.low > 3 * (by_match.high - by_match.low)


def test_player_bootstrap_of_identical_forecasts_is_zero() -> None:
    """Two identical systems differ by exactly 0 whichever players are drawn."""
    p, _, y, a, b = _one_player_matters(200, 10)
    d = player_bootstrap(p, p, y, a, b, resamples=50)
    assert (d.mean, d.low, d.high) == (0.0, 0.0, 0.0)


def test_player_bootstrap_checks_its_arguments() -> None:
    """Player columns of the wrong length and resamples below 1 are refused by name."""
    p, reference, y, a, b = _one_player_matters(100, 5)
    with pytest.raises(ValidationError, match="players"):
        player_bootstrap(p, reference, y, a[:-1], b)
    with pytest.raises(ValidationError, match="resamples"):
        player_bootstrap(p, reference, y, a, b, resamples=0)
