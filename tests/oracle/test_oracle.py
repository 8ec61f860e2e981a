"""Hundreds of thousands of cases and the ATP history: the compiled C# method against the Python side."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from needs import require_atp
from sedma_elo import REFERENCE_RULES, load_history, replay
from sedma_elo.core.compat import calculate_new_ratings

from . import csharp
from .cases import random_cases, rate_case
from .csharp import Case
from .golden import ODD_K_RULES, within_range
from .kernel_pairs import kernel_rate_many

#: Cases per run (one Mono process each); seeded, so every run checks the same cases.
N_REFERENCE = 200_000
N_ODD_K = 100_000
#: Of those, how many also go through rate()'s explanation (the slower path).
N_EXPLAINED = 20_000


@pytest.fixture(scope="module")
def oracle() -> csharp.Oracle:
    """The verbatim method, compiled once per run (cached by source hash)."""
    csharp.require_mono()
    return csharp.Oracle(csharp.build())


def _mismatches(
    cases: Sequence[Case], got: Sequence[tuple[int, int]], want: Sequence[tuple[int, int]]
) -> list[object]:
    bad = [(c, g, w) for c, g, w in zip(cases, got, want, strict=True) if g != w]
    return bad[:5] + ([f"... {len(bad)} in all"] if len(bad) > 5 else [])


@pytest.mark.slow
def test_drop_in_and_kernel_equal_the_csharp_method_on_random_cases(oracle: csharp.Oracle) -> None:
    """200,000 random and adversarial cases: calculate_new_ratings and the kernel return the C# results."""
    cases = random_cases(N_REFERENCE, seed=2026)
    want = [within_range(w) for w in oracle.rate_many(cases)]
    assert _mismatches(cases, [calculate_new_ratings(*c) for c in cases], want) == []
    assert _mismatches(cases, kernel_rate_many(cases, REFERENCE_RULES), want) == []
    some = cases[:N_EXPLAINED]
    assert (
        _mismatches(some, [rate_case(c, REFERENCE_RULES, explained=True) for c in some], want[:N_EXPLAINED])
        == []
    )


@pytest.mark.slow
def test_rate_and_kernel_equal_the_odd_k_method_on_random_cases() -> None:
    """100,000 cases under odd K (rounding midpoints occur): rate() and the kernel return the C# results."""
    csharp.require_mono()
    cases = random_cases(N_ODD_K, seed=4117)
    want = [within_range(w) for w in csharp.Oracle(csharp.build("odd_k")).rate_many(cases)]
    fast = [rate_case(c, ODD_K_RULES) for c in cases]
    assert _mismatches(cases, fast, want) == []
    assert _mismatches(cases, kernel_rate_many(cases, ODD_K_RULES), want) == []


@pytest.mark.slow
def test_atp_replay_equals_a_csharp_loop_player_for_player(oracle: csharp.Oracle) -> None:
    """The 603k ATP matches: replay()'s final rating of every player equals a C# loop over the file."""
    path = require_atp()
    want, left_out = oracle.replay(path, REFERENCE_RULES.initial_rating)
    history, errors = load_history(path, skip_bad=True)
    got = replay(history, method="kernel").ratings
    assert left_out == len(errors) == 4  # the file's four self-play rows, left out on both sides
    assert len(want) > 10_000
    assert list(got) == list(want)  # same players, in order of first appearance
    assert {p: (got[p], r) for p, r in want.items() if got[p] != r} == {}
