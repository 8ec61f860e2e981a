"""A repeated match post answers the first answer byte for byte, derived from the stored facts.

The first answer is the live write path's (the text the ``created`` outcome or the 201 carried);
the repeat's is derived from the ledger's rows by another path (``service/ledger/answers.py``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Api, single
from core.strategies import any_rules
from needs import reset_pg
from sedma_elo.core.rules import REFERENCE_RULES, Rules
from sedma_elo.service import Ledger
from sedma_elo.service.ledger.rows import fact_values, submission_of
from sedma_elo.service.payload import MatchIn, Submission, submission_from_payload
from sedma_elo.storage import open_database

#: Every form: one against one and teams, wins and draws, every statistic (up to its maximum),
#: ids beyond ASCII, times with and without microseconds, in another zone, and none.
BODIES: list[dict[str, Any]] = [
    {
        "match_id": "d-1",
        "played_at": "2026-11-29T12:00:00Z",
        "player_a": "alice",
        "player_b": "bob",
        "winner": "a",
        "stats": {
            "a": {"bad_moves": 1, "won_by_16": 2, "won_by_24": 0, "won_by_4_and_last": 1},
            "b": {"bad_moves": 0, "won_by_16": 0, "won_by_24": 1, "won_by_4_and_last": 3},
        },
    },
    {"match_id": "d-2", "player_a": "bob", "player_b": "\u010dern\u00fd", "winner": "draw"},
    {
        "match_id": "d-3",
        "played_at": "2026-11-29T13:00:00.250000+02:00",
        "team_a": ["alice", "carol"],
        "team_b": ["bob", "dave"],
        "winner": "b",
        "stats": {"carol": {"won_by_16": 1}, "dave": {"bad_moves": 1_000_000}},
    },
    {
        "match_id": "d-4 \u00e9t\u00e9",
        "played_at": "0001-01-01T00:00:00Z",
        "player_a": "erin",
        "player_b": "frank",
        "winner": "b",
        "stats": {"a": {"won_by_4_and_last": 12, "won_by_24": 7}},
    },
    {
        "match_id": "d-5",
        "played_at": "9999-12-31T23:59:59.999999Z",
        "team_a": ["dave", "erin"],
        "team_b": ["\u010dern\u00fd", "alice"],
        "winner": "draw",
        "stats": {"alice": {"won_by_24": 2, "won_by_16": 1}, "erin": {"bad_moves": 3}},
    },
    {"match_id": "d-6", "player_a": "alice", "player_b": "bob", "winner": "b"},
]
#: A rule set where the games played and the margin reach the answer.
VARIANT = REFERENCE_RULES.replace(
    version="9.0", initial_rating=1500, k_new_player_games=3, k_new_player_multiplier=2.0, margin_scale=0.5
)


def _sub(body: dict[str, Any]) -> Submission:
    return submission_from_payload(MatchIn.model_validate(body))


def _first_answers(ledger: Ledger, bodies: list[dict[str, Any]]) -> dict[str, str]:
    """Post each body in its own batch; the live answers by match id."""
    out = {}
    for body in bodies:
        (outcome,) = ledger.apply([_sub(body)])
        assert outcome.status == "created", outcome
        out[body["match_id"]] = outcome.body
    return out


def _repeats(ledger: Ledger, bodies: list[dict[str, Any]]) -> dict[str, str]:
    """Post every body again in one batch; the answers by match id."""
    outcomes = ledger.apply([_sub(b) for b in bodies])
    assert {o.status for o in outcomes} == {"repeat"}
    return {b["match_id"]: o.body for b, o in zip(bodies, outcomes, strict=True)}


def test_a_row_decodes_to_the_submitted_body_and_hash() -> None:
    """Every form's facts, stored as columns, decode to the canonical text and hash that came in."""
    for body in BODIES:
        sub = _sub(body)
        facts = fact_values(sub, str)  # the ids in the key slots: the decoder reads only the ids
        slots = facts[4:8]
        row = (7, facts[0], facts[2], facts[3], *slots, *slots, *facts[8:])
        seq, back = submission_of(row)
        assert (seq, back.body, back.body_hash, back.played_at) == (7, sub.body, sub.body_hash, sub.played_at)
        assert bytes.fromhex(sub.body_hash) == facts[1]


def test_repeats_answer_the_first_answers_byte_for_byte(db_url: str) -> None:
    """Under the reference rules and a variant (games played, margin): each repeat equals its first answer."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        first = _first_answers(ledger, BODIES[:3])
        ledger.rerate(VARIANT, "variant")
        first |= _first_answers(ledger, BODIES[3:])
        assert _repeats(ledger, BODIES) == first
        fresh = Ledger(open_database(db_url))  # no cache of versions or anything else
        try:
            assert _repeats(fresh, BODIES) == first
        finally:
            fresh.db.dispose()
    finally:
        ledger.db.dispose()


def test_a_repeat_in_the_same_batch_answers_the_first_answer(db_url: str) -> None:
    """A body repeated within its own batch answers the text created a moment before."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        out = ledger.apply([_sub(BODIES[2]), _sub(BODIES[2])])
        assert [o.status for o in out] == ["created", "repeat"] and out[1].body == out[0].body
    finally:
        ledger.db.dispose()


def test_without_answers_a_repeat_is_counted_but_not_derived(db_url: str) -> None:
    """``apply(answers=False)`` (the importer's) gives a repeat an empty body; a conflict stays one."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        _first_answers(ledger, BODIES[:2])
        changed = {**BODIES[1], "winner": "a"}
        out = ledger.apply([_sub(BODIES[0]), _sub(changed)], answers=False)
        assert [(o.status, o.body) for o in out] == [("repeat", ""), ("error", "")]
    finally:
        ledger.db.dispose()


def test_a_void_keeps_the_later_first_answers(db_url: str) -> None:
    """A void rebuilds the ratings after it; the later matches still answer their first answers."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        first = _first_answers(ledger, BODIES)
        ledger.void("d-1", "entered twice")
        later = BODIES[1:]
        assert _repeats(ledger, later) == {k: v for k, v in first.items() if k != "d-1"}
        assert ledger.verify().ok
    finally:
        ledger.db.dispose()


def test_a_void_keeps_only_the_answers_it_changed(db_url: str) -> None:
    """Matches of other players than the voided one's keep no answer text: theirs still derive."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        _first_answers(ledger, [single("k-1"), single("k-2", "cyd", "dan"), single("k-3", "alice", "eve")])
        ledger.void("k-1")
        kept = ledger.db.query(
            "SELECT m.match_id FROM kept_answers k JOIN matches m ON m.sequence = k.sequence"
        )
        assert kept == [("k-3",)]
    finally:
        ledger.db.dispose()


def test_a_voided_match_repeats_its_voided_view(api: Api) -> None:
    """After a void the repeat answers 200 with the voided match and no changes, as the void answered."""
    body = {**BODIES[0], "match_id": "v-1"}
    assert api.post(body).status_code == 201
    voided = api.admin("/v1/admin/matches/v-1/void", {"reason": "cheating"})
    assert voided.status_code == 200
    again = api.post(body)
    assert again.status_code == 200
    assert again.text == json.dumps(voided.json(), separators=(",", ":"), ensure_ascii=False)
    assert again.json()["voided"] is True and again.json()["changes"] == []


def test_an_http_repeat_answers_the_bytes_of_the_201(api: Api) -> None:
    """Over HTTP: the 200 of a repeat carries the bytes of the 201, for every form."""
    for body in BODIES:
        created = api.post(body)
        assert created.status_code == 201
        again = api.post(body)
        assert (again.status_code, again.content) == (200, created.content)
        assert api.post({**body, "winner": "a" if body["winner"] != "a" else "b"}).status_code == 409


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=any_rules(), winners=st.lists(st.sampled_from(["a", "b", "draw"]), min_size=6, max_size=6))
def test_repeats_equal_first_answers_under_any_rules(db_url: str, rules: Rules, winners: list[str]) -> None:
    """Under rule sets drawn from the whole declared space, each repeat equals its first answer."""
    bodies = [{**b, "winner": w} for b, w in zip(BODIES, winners, strict=True)]
    with tempfile.TemporaryDirectory() as tmp:
        if db_url.startswith("sqlite"):
            url = f"sqlite:///{Path(tmp) / 'ledger.db'}"
        else:
            reset_pg(db_url)
            url = db_url
        ledger = Ledger(open_database(url))
        try:
            ledger.ensure_version(rules)
            first = _first_answers(ledger, bodies)
            assert _repeats(ledger, bodies) == first
        finally:
            ledger.db.dispose()


def test_one_batch_answers_repeats_a_voided_repeat_a_new_match_and_a_conflict(db_url: str) -> None:
    """Repeats derived together in one batch: each its first answer, the voided one its voided view."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        first = _first_answers(ledger, BODIES)
        ledger.void("d-6", "entered twice")
        subs = [BODIES[0], BODIES[5], single("n-1"), {**BODIES[1], "winner": "a"}, BODIES[2]]
        out = ledger.apply([_sub(b) for b in subs])
        assert [o.status for o in out] == ["repeat", "repeat", "created", "error", "repeat"]
        assert (out[0].body, out[4].body) == (first["d-1"], first["d-3"])
        voided = json.loads(out[1].body)
        assert (voided["match_id"], voided["voided"], voided["changes"]) == ("d-6", True, [])
    finally:
        ledger.db.dispose()
