"""The Sedma rules as a forecaster, and the calibration wrapper."""

from __future__ import annotations

import numpy as np
import pytest

from sedma_elo import REFERENCE_RULES, rate
from sedma_elo.analysis.metrics import chronological_split
from sedma_elo.analysis.sedma import calibrated, fit_logit_scale, sedma_rules
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.errors import ValidationError


def test_forecast_is_expected_score_of_engine_ratings(small_history) -> None:  # type: ignore[no-untyped-def]
    """p is the Elo expected score of the ratings rate() gives before each match."""
    t = table_from_matches(small_history)
    fc = sedma_rules()(t, chronological_split(len(t)))
    ratings: dict[str, int] = {}
    for i, m in enumerate(small_history):
        ra = ratings.get(m.team_a[0], 1000)
        rb = ratings.get(m.team_b[0], 1000)
        assert fc.rating_a[i] == ra and fc.rating_b[i] == rb
        assert fc.p[i] == pytest.approx(1 / (1 + 10 ** ((rb - ra) / 400)), rel=1e-12)
        ratings.update(rate(m, ratings, REFERENCE_RULES).new_ratings)
    assert fc.final.tolist() == [ratings[p] for p in t.players]


def test_fit_logit_scale_recovers_known_factor() -> None:
    """Outcomes drawn from sigmoid(2 * logit(p)) give a fitted factor close to 2."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.2, 0.8, 40_000)
    z = np.log(p / (1 - p))
    y = (rng.random(p.size) < 1 / (1 + np.exp(-2 * z))).astype(float)
    assert fit_logit_scale(p, y) == pytest.approx(2.0, abs=0.1)


def test_calibrated_keeps_ratings_and_changes_only_probabilities(small_history) -> None:  # type: ignore[no-untyped-def]
    """Calibration leaves the ratings alone and keeps p = 0.5 where the ratings are equal."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    plain = sedma_rules()(t, split)
    cal = calibrated(sedma_rules())(t, split)
    np.testing.assert_array_equal(plain.rating_a, cal.rating_a)
    assert cal.p[0] == pytest.approx(0.5)
    assert "logit_scale" in cal.params


def test_calibration_needs_validation_window(small_history) -> None:  # type: ignore[no-untyped-def]
    """Without a validation window calibration is refused, naming valid_fraction."""
    t = table_from_matches(small_history)
    with pytest.raises(ValidationError, match="valid_fraction"):
        calibrated(sedma_rules())(t, chronological_split(len(t), 0.3, 0.0))
