"""A rebuild written in primary-key order, in passes over ranges of player keys (ledger/key_order.py).

With a hold budget of a few changes every rebuild takes several passes over the ledger; what it
stores must be what a pure fold over the matches gives, and the same as a one-pass rebuild.
"""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledgers import empty_ledger
from test_bulk import _fold, _stored

from core.strategies import any_rules, team_history
from sedma_elo import Match, Rules
from sedma_elo.service.ledger import bulk, key_order
from sedma_elo.service.ledger.rebuild import Rebuild


@pytest.fixture(params=["kernel", "fold"])
def small(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Chunks of three rows, slices of two changes; the kernel from the first match on, or the fold."""
    monkeypatch.setattr(bulk, "CHUNK", 3)
    monkeypatch.setattr(key_order, "WRITE_SLICE", 2)
    monkeypatch.setattr(key_order, "HOLD_BUDGET", key_order.HOLD_BUDGET)  # put back after the test
    monkeypatch.setattr(bulk, "KERNEL_FROM", 0 if request.param == "kernel" else 10**9)
    if request.param == "fold":
        monkeypatch.setattr(bulk, "_JIT_MODULE", "not.loaded")
    return str(request.param)


def _ordered(plan: Rebuild, budget: int) -> tuple[np.ndarray[Any, Any], list[int]]:
    """Every change ``rate_in_key_order`` yields, and the length of each slice."""
    parts = list(key_order.rate_in_key_order(plan, budget=budget))
    return np.concatenate([np.empty((0, 4), np.int64), *parts]), [len(p) for p in parts]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=any_rules(), matches=team_history(), split=st.integers(0, 12), budget=st.integers(1, 6))
def test_rebuilds_in_passes_store_the_folds_ratings(
    db_url: str, small: str, rules: Rules, matches: list[Match], split: int, budget: int
) -> None:
    """A re-rate and an activate's catch-up held to a few changes a pass store the fold's ratings."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        key_order.HOLD_BUDGET = budget  # the fixture puts it back
        cut = split % (len(matches) + 1)
        assert ledger.import_matches(matches[:cut]).refused == []
        drawn = ledger.rerate(rules, "drawn", activate=False).id
        assert ledger.import_matches(matches[cut:]).refused == []
        ledger.activate(drawn)
        assert _stored(ledger, drawn) == _fold(matches, rules)
        assert ledger.verify().ok


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(matches=team_history(), start=st.integers(0, 11), budget=st.integers(1, 5))
def test_passes_yield_what_one_pass_yields(
    db_url: str, small: str, matches: list[Match], start: int, budget: int
) -> None:
    """Several passes yield the one-pass changes, in (key, sequence) order, with the same end state."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        assert ledger.import_matches(matches).refused == []
        first = start % len(matches) + 1
        with ledger.db.begin_write() as conn:
            raw: Any = conn.connection.driver_connection
            version = ledger._version(conn, 1)
            one, many = (Rebuild(raw, ledger._ph, version, first, 2**62) for _ in range(2))
            whole, _ = _ordered(one, budget=10**6)
            parts, sizes = _ordered(many, budget=budget)
            streamed = np.concatenate(list(Rebuild(raw, ledger._ph, version, first, 2**62).rate()))
        assert np.array_equal(parts, whole)
        assert np.array_equal(whole, streamed[np.lexsort((streamed[:, 0], streamed[:, 1]))])
        assert max(sizes) <= key_order.WRITE_SLICE
        for a, b in ((one.state.ratings, many.state.ratings), (one.state.games, many.state.games)):
            assert np.array_equal(a, b)
        assert np.array_equal(one.state.last, many.state.last)


def test_a_full_pass_cuts_the_keys_it_holds(db_url: str, small: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the budget, a pass restarts the rebuild for the keys it left out: more than one pass."""
    players = [f"p{i}" for i in range(8)]
    matches = [Match.single(players[i % 8], players[(i + 3) % 8], "a", match_id=f"m{i}") for i in range(12)]
    restarts = []
    monkeypatch.setattr(Rebuild, "restart", lambda self, f=Rebuild.restart: restarts.append(1) or f(self))
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        assert ledger.import_matches(matches).refused == []
        with ledger.db.begin_write() as conn:
            raw: Any = conn.connection.driver_connection
            plan = Rebuild(raw, ledger._ph, ledger._version(conn, 1), 1, 2**62)
            got, _ = _ordered(plan, budget=4)
    assert len(got) == 24
    assert len(restarts) >= 2
