"""No forecaster looks ahead: changing the test window's outcomes leaves everything before it unchanged.

Every Sedma variant, the calibration, every peer (tuned or not) and the rules search run on a
history WITH draws; then every outcome of the test window is changed (a win for a becomes a win
for b, b a draw, a draw a win for a) and each forecast up to the first test match, and each fitted
or chosen parameter, must be bit for bit the same. A forecaster that reads the test window anywhere
(a draw rate of the whole history, a calibration fitted past the validation window, a K tuned
on the test window) changes them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from sedma_elo import REFERENCE_RULES, Match, load_rules
from sedma_elo.analysis.forecast import Forecaster
from sedma_elo.analysis.metrics import Split, chronological_split
from sedma_elo.analysis.peers import (
    elo,
    glicko2_weekly,
    openskill_pl,
    peer_forecasters,
    trueskill_1vs1,
    tuned_elo,
)
from sedma_elo.analysis.sedma import calibrated, sedma_rules
from sedma_elo.analysis.table import MatchTable, table_from_matches
from sedma_elo.analysis.tune import tune_rules

from .conftest import synthetic_matches

DOCS = Path(__file__).resolve().parents[2] / "docs"
NEXT = {"a": "b", "b": "draw", "draw": "a"}

SEDMA_VARIANTS = {
    "reference": REFERENCE_RULES,
    "zero_sum": REFERENCE_RULES.replace(name="zs", zero_sum=True),
    "floor": REFERENCE_RULES.replace(name="floor", rating_floor=950),
    "margin": REFERENCE_RULES.replace(name="margin", margin_scale=0.1),
    "k_by_games": REFERENCE_RULES.replace(name="games", k_mode="games", k_new_player_games=5),
    "atp_tuned": load_rules(DOCS / "atp_tuned_rules.toml"),
    "atp_tuned_zero_sum": load_rules(DOCS / "atp_tuned_zero_sum_rules.toml"),
}
FORECASTERS: dict[str, Callable[[], Forecaster]] = {
    **{f"sedma_{name}": (lambda r=rules: sedma_rules(r)) for name, rules in SEDMA_VARIANTS.items()},
    "sedma_calibrated": lambda: calibrated(sedma_rules()),
    "sedma_tuned_calibrated": lambda: calibrated(sedma_rules(SEDMA_VARIANTS["atp_tuned"])),
    "elo_calibrated": lambda: calibrated(elo(32)),
    "elo": lambda: elo(32),
    "elo_tuned": tuned_elo,
    "glicko2": glicko2_weekly,
    "glicko2_unpatched": lambda: glicko2_weekly(fixed=False),
    "trueskill": trueskill_1vs1,
    "openskill": openskill_pl,
    **{f"peer_tuned_{i}": (lambda i=i: peer_forecasters(tune=True)[i]) for i in range(5)},
}


def _changed_test_window(matches: list[Match], split: Split) -> list[Match]:
    out = list(matches)
    for i in range(split.test_start, len(out)):
        m = out[i]
        a, b = m.team_a[0], m.team_b[0]
        stats = (m.stats.get(a), m.stats.get(b))
        out[i] = Match.single(a, b, NEXT[m.winner], *stats, match_id=m.match_id, played_at=m.played_at)  # type: ignore[arg-type]
    return out


@pytest.fixture(scope="module")
def histories() -> tuple[MatchTable, MatchTable, Split]:
    """600 matches with 20% draws, and the same with every test-window outcome changed."""
    matches = synthetic_matches(draws=0.2, seed=7)
    split = chronological_split(len(matches))
    changed = _changed_test_window(matches, split)
    return table_from_matches(matches), table_from_matches(changed), split


def test_the_history_has_draws_in_every_window(histories: tuple[MatchTable, MatchTable, Split]) -> None:
    """The history these tests use has draws before, in and after the validation window."""
    table, changed, split = histories
    for window in (
        slice(0, split.valid_start),
        slice(split.valid_start, split.test_start),
        slice(split.test_start, None),
    ):
        assert np.any(table.y[window] == 0.5)
    assert np.mean(table.y[split.test_start :] == 0.5) != np.mean(changed.y[split.test_start :] == 0.5)


@pytest.mark.parametrize("name", list(FORECASTERS))
def test_test_window_outcomes_change_no_earlier_forecast_or_parameter(
    name: str, histories: tuple[MatchTable, MatchTable, Split]
) -> None:
    """Forecasts up to the first test match and every parameter are the same whatever the test window has."""
    table, changed, split = histories
    base = FORECASTERS[name]()(table, split)
    other = FORECASTERS[name]()(changed, split)
    upto = split.test_start + 1
    np.testing.assert_array_equal(base.p[:upto], other.p[:upto])
    assert dict(base.params) == dict(other.params)
    assert base.system == other.system
    assert not np.array_equal(base.p, other.p)  # the change did reach the forecasts after it


def test_tuned_rules_do_not_depend_on_the_test_window(
    histories: tuple[MatchTable, MatchTable, Split],
) -> None:
    """The rules search picks the same rules and validation loss whatever the test window holds."""
    table, changed, split = histories
    base = tune_rules(table, split, trials=4, seed=3)
    other = tune_rules(changed, split, trials=4, seed=3)
    assert base.rules == other.rules
    assert base.valid_log_loss == other.valid_log_loss
