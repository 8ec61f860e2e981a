"""The backtest protocol, drift and the JSON output."""

from __future__ import annotations

import numpy as np
import pytest

from sedma_elo.analysis.backtest import backtest, results_to_json
from sedma_elo.analysis.forecast import Forecast, rating_drift, rating_quantiles
from sedma_elo.analysis.metrics import Split, chronological_split
from sedma_elo.analysis.peers import elo
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.core.model import Match
from sedma_elo.errors import ValidationError


def _constant(p: float):  # type: ignore[no-untyped-def]
    def run(table, split):  # type: ignore[no-untyped-def]
        return Forecast("constant", np.full(len(table), p))

    return run


def test_scores_only_test_window(small_history) -> None:  # type: ignore[no-untyped-def]
    """A constant forecast of 0.5 has log loss ln 2 and n_test = 30% of the history."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    [r] = backtest(t, [_constant(0.5)], split)
    assert r.test.n_test == 180
    assert r.test.log_loss == pytest.approx(np.log(2))
    assert r.drift is None


def test_json_has_required_keys(small_history) -> None:  # type: ignore[no-untyped-def]
    """The JSON object carries log_loss, brier, accuracy and n_test of the first system at the top."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    out = results_to_json(backtest(t, [elo(32), _constant(0.5)], split), split)
    assert {"log_loss", "brier", "accuracy", "n_test", "systems"} <= out.keys()
    assert out["system"] == "elo(k=32)"
    assert len(out["systems"]) == 2


def test_drift_by_hand() -> None:
    """Two players, K=32: x beats y twice; the test window is the last match."""
    ms = [Match.single("x", "y", "a"), Match.single("x", "y", "a"), Match.single("x", "z", "a")]
    t = table_from_matches(ms)
    split = Split(3, 2, 2)
    fc = elo(32)(t, split)
    d = rating_drift(t, fc, split)
    assert d is not None
    # at the window start x and y have played: their ratings are symmetric around 1500
    assert d.mean_start == pytest.approx(1500.0)
    assert d.players_start == 2 and d.players_end == 3
    assert d.mean_end == pytest.approx(1500.0)  # plain Elo is zero-sum
    assert (d.above_initial, d.below_initial) == (1, 2)
    assert (d.gained, d.lost) == (1, 0)  # x gained in the window; y did not play


def test_rating_quantiles_cover_history(small_history) -> None:  # type: ignore[no-untyped-def]
    """The timeline ends at the last match and counts every player by then."""
    t = table_from_matches(small_history)
    rows = rating_quantiles(t, elo(32)(t, chronological_split(len(t))), points=5)
    assert rows[-1]["match"] == len(t)
    assert rows[-1]["players"] == t.n_players
    assert all(r["q10"] <= r["q50"] <= r["q90"] for r in rows)


def test_empty_history_is_error() -> None:
    """An empty list of matches is a ValidationError naming the history."""
    with pytest.raises(ValidationError, match="history"):
        table_from_matches([])


def test_team_match_refused() -> None:
    """Team matches are named as unsupported by the analysis."""
    m = Match(("a", "b"), ("c", "d"), "a", {})
    with pytest.raises(ValidationError, match="team_a"):
        table_from_matches([m])


def test_differences_against_the_first_system(small_history) -> None:  # type: ignore[no-untyped-def]
    """Every system but the first gets its log-loss difference from it, with an interval around it."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    ref, other = backtest(t, [_constant(0.5), elo(32)], split, resamples=200)
    assert ref.vs_reference is None
    d = other.vs_reference
    assert d is not None
    assert d.mean == pytest.approx(other.test.log_loss - ref.test.log_loss)
    assert d.low <= d.mean <= d.high
    assert other.to_dict()["vs_reference"]["resamples"] == 200
