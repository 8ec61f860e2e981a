"""The ledger on both databases rates as the fold does, for rule sets drawn from the whole declared space.

Each example opens an empty ledger, applies the first part of a history under the reference rules,
re-rates it under the drawn rules (the rebuild path), then applies the rest (the write path under
those rules) and compares every stored rating and match count with one fold over the whole
history; ``verify`` must agree too.
"""

from __future__ import annotations

import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledgers import empty_ledger

from core.strategies import any_rules, team_history
from sedma_elo import Match, Rules
from sedma_elo.core.fold import RatingState, fold
from sedma_elo.service import Ledger


def _stored(ledger: Ledger, players: set[str]) -> dict[str, tuple[int, int]]:
    return {p: (r.rating, r.matches_played) for p in players for r in [ledger.get_player(p)]}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=any_rules(), matches=team_history(), split=st.integers(0, 12))
def test_the_ledger_rates_as_the_fold_does(
    db_url: str, rules: Rules, matches: list[Match], split: int
) -> None:
    """Rebuild under the drawn rules, then writes under them: every stored rating equals the fold's."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        cut = split % (len(matches) + 1)  # anywhere from all-rebuilt to all-written
        first, rest = matches[:cut], matches[cut:]
        assert ledger.import_matches(first).refused == []
        ledger.rerate(rules, "drawn")
        assert ledger.import_matches(rest).refused == []
        state = RatingState()
        for _ in fold(matches, rules, state):
            pass
        want = {p: (state.ratings[p], state.games[p]) for p in state.ratings}
        assert _stored(ledger, set(want)) == want
        assert ledger.verify().ok


pytestmark = pytest.mark.slow
