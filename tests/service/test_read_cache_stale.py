"""A hypothesis state machine: writes, voids and re-rates between reads never leave a stale kept answer.

Two apps share one ledger: one with the read cache (reading the head on every request, so a change
made by the other app is due at once too), one without. After any sequence of writes through
either app, every read of the cached app answers what the uncached one answers at that moment.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)
from ledgers import ExampleDatabase, run_machine

from conftest import make_api, single
from sedma_elo import REFERENCE_RULES

#: Few players, so leaderboard places cross and pages of one or two rows move often.
POOL = ["ann", "ben", "cat", "dan", "eve", "fay"]


class StaleMachine(RuleBasedStateMachine):
    url = ""

    def __init__(self) -> None:
        super().__init__()
        self._db = ExampleDatabase(self.url)
        url = self._db.url
        self._cached_gen = make_api(url, read_cache_seconds=0)
        self.cached = next(self._cached_gen)
        self._plain_gen = make_api(url, read_cache_size=0)
        self.plain = next(self._plain_gen)
        self.cursors: list[str] = []
        self.posted: list[str] = []
        self.counter = 0

    def teardown(self) -> None:
        self._cached_gen.close()
        self._plain_gen.close()
        self._db.cleanup()

    def _same(self, path: str) -> str | None:
        """Read ``path`` from both apps, assert the same answer; its ``next_cursor``, if any."""
        got, want = self.cached.client.get(path), self.plain.client.get(path)
        assert (got.status_code, got.text) == (want.status_code, want.text), path
        cursor = got.json().get("next_cursor") if got.status_code == 200 else None
        if cursor and cursor not in self.cursors:
            self.cursors.append(cursor)
        return cursor

    @rule(
        pair=st.permutations(POOL).map(lambda p: p[:2]),
        winner=st.sampled_from(["a", "b", "draw"]),
        here=st.booleans(),
    )
    def write(self, pair: list[str], winner: str, here: bool) -> None:
        self.counter += 1
        match_id = f"m-{self.counter}"
        api = self.cached if here else self.plain
        assert api.post(single(match_id, pair[0], pair[1], winner)).status_code == 201
        self.posted.append(match_id)

    @precondition(lambda self: bool(self.posted))
    @rule(data=st.data())
    def void(self, data: st.DataObject) -> None:
        match_id = data.draw(st.sampled_from(self.posted))
        self.posted.remove(match_id)
        assert self.cached.admin(f"/v1/admin/matches/{match_id}/void", {"reason": "t"}).status_code == 200

    @rule(initial=st.sampled_from([1200, 1500]))
    def rerate(self, initial: int) -> None:
        rules = REFERENCE_RULES.replace(version=f"9.{initial}", initial_rating=initial)
        assert self.plain.admin("/v1/admin/rules", {"rules_toml": rules.to_toml()}).status_code == 201

    @invariant()
    def every_read_is_fresh(self) -> None:
        """Every player, every page of limit 1 to 3 from the top, and pages after cursors of before."""
        for player in POOL:
            self._same(f"/v1/players/{player}")
        for limit in (1, 2, 3):
            path = f"/v1/leaderboard?limit={limit}"
            while path:
                cursor = self._same(path)
                path = f"/v1/leaderboard?limit={limit}&cursor={cursor}" if cursor else ""
        for cursor in self.cursors[-6:]:  # cursors of earlier states: their pages may have moved
            self._same(f"/v1/leaderboard?limit=2&cursor={cursor}")


@pytest.mark.slow
def test_no_kept_answer_is_ever_stale(db_url: str) -> None:
    """Random writes (here and elsewhere), voids and re-rates between reads: cached == uncached, always."""
    run_machine(StaleMachine, db_url, (20, 10), 20)
