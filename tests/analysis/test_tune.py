"""Tuning: bounded search on the validation window, never the test window."""

from __future__ import annotations

import pytest

from sedma_elo import REFERENCE_RULES, rules_from_toml
from sedma_elo.analysis.metrics import chronological_split
from sedma_elo.analysis.table import table_from_matches
from sedma_elo.analysis.tune import (
    _params_of,
    fix_params,
    rules_from_params,
    search_space,
    tune_rules,
    validation_loss,
)
from sedma_elo.core.model import Match
from sedma_elo.errors import ValidationError


def test_reference_rules_are_a_point_of_the_space() -> None:
    """The reference rules map to a point inside the bounds and back to equal rules."""
    point = _params_of(REFERENCE_RULES, search_space())
    for p in search_space():
        if p.choices:
            assert point[p.name] in p.choices
        else:
            assert p.low <= point[p.name] <= p.high
    assert rules_from_params(point, name=REFERENCE_RULES.name) == REFERENCE_RULES.replace(description="")


def test_every_corner_of_the_space_is_valid_rules() -> None:
    """The lowest and highest corners of the bounded space are valid rule sets."""
    for end in (0, -1):
        point = {p.name: p.choices[end] if p.choices else (p.low, p.high)[end] for p in search_space()}
        rules_from_params(point)


def test_validation_loss_ignores_test_window(small_history) -> None:  # type: ignore[no-untyped-def]
    """Flipping every result in the test window does not change the validation loss."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    flipped = [
        Match.single(m.team_a[0], m.team_b[0], "b" if m.winner == "a" else "a")
        if i >= split.test_start
        else m
        for i, m in enumerate(small_history)
    ]
    a = validation_loss(t, split, REFERENCE_RULES)
    b = validation_loss(table_from_matches(flipped), split, REFERENCE_RULES)
    assert a == b


def test_tuning_never_worse_than_start_and_writes_loadable_rules(small_history) -> None:  # type: ignore[no-untyped-def]
    """The best of a few trials is at least as good as the reference (trial 0) and round-trips TOML."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    result = tune_rules(t, split, trials=4, seed=1)
    assert result.valid_log_loss <= validation_loss(t, split, REFERENCE_RULES)
    assert rules_from_toml(result.rules.to_toml()) == result.rules
    assert validation_loss(t, split, result.rules) == pytest.approx(result.valid_log_loss)


def test_tuning_with_sqlite_storage_resumes(tmp_path, small_history) -> None:  # type: ignore[no-untyped-def]
    """Two runs on one RDB storage share the study: trials add up."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    url = f"sqlite:///{tmp_path / 'study.db'}"
    tune_rules(t, split, trials=2, storage=url)
    assert tune_rules(t, split, trials=2, storage=url).trials == 4


def test_tuning_needs_validation_window(small_history) -> None:  # type: ignore[no-untyped-def]
    """A split without a validation window is refused."""
    t = table_from_matches(small_history)
    with pytest.raises(ValidationError, match="valid_fraction"):
        tune_rules(t, chronological_split(len(t), 0.3, 0.0), trials=1)


def test_tuning_in_worker_processes(small_history) -> None:  # type: ignore[no-untyped-def]
    """jobs=2 runs the trials in two processes sharing one study; every trial is reported once."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    seen: list[int] = []
    result = tune_rules(t, split, trials=4, jobs=2, on_trial=lambda n, v, b: seen.append(n))
    assert result.trials == 4
    assert sorted(seen) == [0, 1, 2, 3]
    assert result.valid_log_loss <= validation_loss(t, split, REFERENCE_RULES)


@pytest.mark.parametrize("seed", range(20))
def test_a_neighbour_moves_one_to_three_coefficients_inside_the_bounds(seed: int) -> None:
    """neighbour() changes 1-3 values of a point, each still inside its dimension's bounds."""
    import random

    from sedma_elo.analysis.tune import neighbour

    space = search_space()
    start = _params_of(REFERENCE_RULES, space)
    moved = neighbour(start, space, random.Random(seed))
    assert 0 <= sum(moved[k] != start[k] for k in start) <= 3  # a choice may be drawn again
    for p in space:
        if p.choices:
            assert moved[p.name] in p.choices
        else:
            assert p.low <= moved[p.name] <= p.high
            assert isinstance(moved[p.name], int) == p.integer
    rules_from_params(moved)


def test_local_search_adds_its_trials_and_never_loses_the_start(small_history) -> None:  # type: ignore[no-untyped-def]
    """trials=1 (the start) and local=4: five trials, the chosen one no worse than the start."""
    t = table_from_matches(small_history)
    split = chronological_split(len(t))
    result = tune_rules(t, split, trials=1, local=4, seed=2, objectives=1)
    assert result.trials == 5
    assert result.valid_log_loss <= validation_loss(t, split, REFERENCE_RULES)


def test_local_search_refuses_a_negative_count(small_history) -> None:  # type: ignore[no-untyped-def]
    """local=-1 is an error naming the field."""
    t = table_from_matches(small_history)
    with pytest.raises(ValidationError, match="local"):
        tune_rules(t, chronological_split(len(t)), trials=1, local=-1)


def test_fix_params_sets_the_value_and_drops_the_dimension() -> None:
    """fix_params: the base rules get the fixed value and the search space loses that dimension."""
    rules, space = fix_params(REFERENCE_RULES, ["update.newcomer_balance=0.5", "k_factor.new_player_games=9"])
    assert rules.newcomer_balance == 0.5 and rules.k_new_player_games == 9
    names = {p.name for p in space}
    assert "update.newcomer_balance" not in names and "k_factor.new_player_games" not in names
    assert len(space) == len(search_space()) - 2


@pytest.mark.parametrize("fixes", [["margin.scale=0.1", "margin.scale=0.2"], ["k_factor.tiers[0].k=50"]])
def test_fix_params_refuses_a_repeated_name_or_a_tier(fixes: list[str]) -> None:
    """The same coefficient fixed twice, or one tier dimension alone, is an error naming --fix."""
    with pytest.raises(ValidationError) as caught:
        fix_params(REFERENCE_RULES, fixes)
    assert caught.value.field == "--fix"
