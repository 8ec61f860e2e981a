"""A hypothesis state machine: posts, repeats, conflicts, voids and re-rates keep "stored == pure replay".

The replay also gives each player's history, which the newest-first recent changes must match.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)
from ledgers import ExampleDatabase, run_machine

from conftest import make_api
from sedma_elo import REFERENCE_RULES, Match, PlayerStats, rate
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database

POOL = ["ann", "ben", "cat", "dan"]
#: Rules a re-rate may switch to: the reference, a higher start, and zero-sum changes.
RULE_SETS = [
    REFERENCE_RULES,
    REFERENCE_RULES.replace(version="2.0", initial_rating=1500),
    REFERENCE_RULES.replace(version="3.0", zero_sum=True),
]
counts = st.fixed_dictionaries(
    {
        "bad_moves": st.integers(0, 20),
        "won_by_16": st.integers(0, 3),
        "won_by_24": st.integers(0, 2),
        "won_by_4_and_last": st.integers(0, 3),
    }
)


class LedgerMachine(RuleBasedStateMachine):
    url = ""

    def __init__(self) -> None:
        super().__init__()
        self._db = ExampleDatabase(self.url)
        url = self._db.url
        self._gen = make_api(url)
        self.api = next(self._gen)
        self.posted: list[tuple[str, dict[str, Any], bytes]] = []  # in application order
        self.voided: set[str] = set()
        self.rules = REFERENCE_RULES  # of the active version
        self.counter = 0

    def teardown(self) -> None:
        self._gen.close()
        self._db.cleanup()

    @rule(
        pair=st.permutations(POOL).map(lambda p: p[:2]),
        winner=st.sampled_from(["a", "b", "draw"]),
        sa=counts,
        sb=counts,
    )
    def post_new(self, pair: list[str], winner: str, sa: dict[str, int], sb: dict[str, int]) -> None:
        self.counter += 1
        body = {
            "match_id": f"s-{self.counter}",
            "player_a": pair[0],
            "player_b": pair[1],
            "winner": winner,
            "stats": {"a": sa, "b": sb},
        }
        r = self.api.post(body)
        assert r.status_code == 201, r.text
        self.posted.append((body["match_id"], body, r.content))

    @precondition(lambda self: self.posted)
    @rule(data=st.data())
    def post_repeat(self, data: st.DataObject) -> None:
        match_id, body, first = data.draw(st.sampled_from(self.posted))
        r = self.api.post(body)
        assert r.status_code == 200
        if match_id in self.voided:  # the stored answer says it is voided, with no changes
            assert r.json()["voided"] is True and r.json()["changes"] == []
        else:
            assert r.content == first

    @precondition(lambda self: self.posted)
    @rule(data=st.data())
    def post_conflict(self, data: st.DataObject) -> None:
        _match_id, body, _ = data.draw(st.sampled_from(self.posted))
        other = dict(body, winner="b" if body["winner"] == "a" else "a")
        assert self.api.post(other).status_code == 409

    @precondition(lambda self: self.posted)
    @rule(data=st.data())
    def void(self, data: st.DataObject) -> None:
        match_id, _, _ = data.draw(st.sampled_from(self.posted))
        r = self.api.admin(f"/v1/admin/matches/{match_id}/void", {"reason": "test"})
        assert r.status_code == 200
        self.voided.add(match_id)

    @rule(rules=st.sampled_from(RULE_SETS))
    def rerate(self, rules: Any) -> None:
        r = self.api.admin("/v1/admin/rules", {"rules_toml": rules.to_toml()})
        assert r.status_code == 201, r.text
        self.rules = rules

    @invariant()
    def stored_equals_pure_replay(self) -> None:
        ratings: dict[str, int] = {}
        played: dict[str, int] = {}
        history: dict[str, list[tuple[str, int, int]]] = {p: [] for p in POOL}  # oldest first
        for match_id, body, _ in self.posted:
            if match_id in self.voided:
                continue
            s = body["stats"]
            m = Match.single(
                body["player_a"],
                body["player_b"],
                body["winner"],
                PlayerStats(**s["a"]),
                PlayerStats(**s["b"]),
            )
            result = rate(m, ratings, self.rules)
            ratings.update(result.new_ratings)
            for c in result.changes:
                played[c.player_id] = played.get(c.player_id, 0) + 1
                history[c.player_id].append((match_id, c.rating_before, c.rating_after))
        for p in POOL:
            r = self.api.get(f"/v1/players/{p}")
            if p in ratings:
                assert (r.json()["rating"], r.json()["matches_played"]) == (ratings[p], played[p])
            else:
                assert r.status_code == 404
        recent = self.api.get("/v1/recent-changes", players=POOL, n=3).json()["items"]
        for p in POOL:
            got = [(i["match_id"], i["rating_before"], i["rating_after"]) for i in recent[p]]
            assert got == history[p][::-1][:3], p
        db = open_database(self.api.url, migrate=False)
        try:
            report = Ledger(db).verify()
        finally:
            db.dispose()
        assert report.ok, report.mismatches


@pytest.mark.slow
def test_ledger_state_machine(db_url: str) -> None:
    """Random sequences of posts, repeats, conflicts, voids and re-rates never break "stored == replay"."""
    run_machine(LedgerMachine, db_url, (20, 12), 12)


_ = pytest
