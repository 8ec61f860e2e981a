"""WHR and kickscore peers: predicted before observed, guarded, settings from the validation window."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sedma_elo.analysis.kickscore_peer import kickscore_periodic
from sedma_elo.analysis.metrics import chronological_split, score_forecasts
from sedma_elo.analysis.peers import tuned
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.analysis.whole_history import later_slice, whr_periodic
from sedma_elo.core.model import Match
from sedma_elo.errors import ValidationError

from .conftest import synthetic_matches

BLOCK = 100


@pytest.fixture(scope="module")
def history() -> list[Match]:
    return synthetic_matches(20, 400, seed=4)


def _flip_from(matches: list[Match], start: int) -> list[Match]:
    return [
        Match.single(m.team_a[0], m.team_b[0], "b" if m.winner == "a" else "a", played_at=m.played_at)
        if i >= start
        else m
        for i, m in enumerate(matches)
    ]


@pytest.mark.parametrize(
    "peer",
    [
        whr_periodic(refit_every=BLOCK, iterations=3),
        kickscore_periodic(refit_every=BLOCK, max_iter=3),
        kickscore_periodic(refit_every=BLOCK, max_iter=3, sweeps="recent", first_block=BLOCK),
        kickscore_periodic(refit_every=BLOCK, max_iter=2, sweeps="recent", first_block=BLOCK, full_every=2),
    ],
)
def test_a_block_is_predicted_before_it_is_observed(peer, history) -> None:  # type: ignore[no-untyped-def]
    """Flipping every result from match 200 on leaves every forecast up to match 299 unchanged."""
    t = table_from_matches(history)
    split = chronological_split(len(t))
    a = peer(t, split).p
    b = peer(table_from_matches(_flip_from(history, 2 * BLOCK)), split).p
    assert np.array_equal(a[: 3 * BLOCK], b[: 3 * BLOCK])
    assert not np.array_equal(a[3 * BLOCK :], b[3 * BLOCK :])


@pytest.mark.parametrize(
    "peer",
    [
        whr_periodic(refit_every=BLOCK, iterations=3),
        kickscore_periodic(refit_every=BLOCK, max_iter=3),
        kickscore_periodic(refit_every=BLOCK // 4, max_iter=3, sweeps="recent", first_block=BLOCK),
    ],
)
def test_peer_beats_a_coin_on_skill_driven_results(peer, history) -> None:  # type: ignore[no-untyped-def]
    """On results drawn from hidden skills, the test log loss is below a coin flip's ln 2."""
    t = table_from_matches(history)
    split = chronological_split(len(t))
    fc = peer(t, split)
    assert score_forecasts(fc.p[split.test_start :], t.y[split.test_start :]).log_loss < math.log(2)
    assert fc.params["guarded"] == 0


def test_whr_guard_replaces_unsound_ratings(history) -> None:  # type: ignore[no-untyped-def]
    """With a bound no rating can meet, every rated prediction is guarded and all stay probabilities."""
    t = table_from_matches(history)
    fc = whr_periodic(w2=1000.0, refit_every=BLOCK, iterations=3, limit=1e-9)(t, chronological_split(len(t)))
    assert fc.params["guarded"] > 0
    assert np.all((fc.p >= 0) & (fc.p <= 1))


def test_whr_settings_chosen_on_validation(history) -> None:  # type: ignore[no-untyped-def]
    """tuned() picks w2 by validation log loss and records the choice in the name and params."""
    t = table_from_matches(history)
    fc = tuned(
        "whr", lambda w2: whr_periodic(w2=w2, refit_every=BLOCK, iterations=2), [{"w2": 5.0}, {"w2": 50.0}]
    )(t, chronological_split(len(t)))
    assert fc.params["w2"] in (5.0, 50.0) and "valid_log_loss" in fc.params
    assert fc.system.startswith("whr tuned (w2=")


def test_later_slice_starts_where_it_says(history) -> None:  # type: ignore[no-untyped-def]
    """A peer on a later slice forecasts 0.5 before it and names its start; a start after validation fails."""
    t = table_from_matches(history)
    split = chronological_split(len(t))
    fc = later_slice(whr_periodic(refit_every=BLOCK, iterations=2), 50)(t, split)
    assert np.all(fc.p[:50] == 0.5) and fc.params["slice_start"] == 50
    assert "from match 50" in fc.system
    with pytest.raises(ValidationError, match="start"):
        later_slice(whr_periodic(), split.valid_start + 1)(t, split)


def test_bad_settings_are_refused_by_name() -> None:
    """A block size below 1 or a non-positive w2 or variance is an error naming the field."""
    with pytest.raises(ValidationError, match="refit_every"):
        whr_periodic(refit_every=0)
    with pytest.raises(ValidationError, match="w2"):
        whr_periodic(w2=0.0)
    with pytest.raises(ValidationError, match="lscale"):
        kickscore_periodic(lscale=-1.0)
    with pytest.raises(ValidationError, match="sweeps"):
        kickscore_periodic(sweeps="some")
    with pytest.raises(ValidationError, match="warm_iter"):
        kickscore_periodic(warm_iter=0)
    with pytest.raises(ValidationError, match="full_every"):
        kickscore_periodic(full_every=-1)
