"""``Prefer: return=minimal``: a write answers the summary of the answer it would have got.

The summary is built directly on the write path (``views.summary_text``) and derived from the
full answer for repeats (``views.summary_of``); both are checked against the projection of the
full answer that another ledger, fed the same matches without the preference, gave.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledgers import empty_ledger
from test_derived_answers import BODIES, VARIANT
from test_derived_answers import _sub as derived_sub

from conftest import Api, make_api, single
from core.strategies import any_rules
from needs import reset_pg
from sedma_elo.core.rules import REFERENCE_RULES, Rules
from sedma_elo.service import Ledger
from sedma_elo.service.api.responses import MatchSummary, RatingMove
from sedma_elo.service.ledger.views import SUMMARY_CHANGE_KEYS
from sedma_elo.service.payload import Submission
from sedma_elo.storage import open_database

MINIMAL = {"Prefer": "return=minimal"}


def _sub(body: dict[str, Any], minimal: bool) -> Submission:
    sub = derived_sub(body)
    sub.minimal = minimal
    return sub


def _project(full: str) -> str:
    """The summary of a full answer, as the docs define it (written here, not taken from the code)."""
    view = json.loads(full)
    del view["match"]
    view["changes"] = [
        {k: c[k] for k in ("player_id", "rating_before", "rating_after", "delta")} for c in view["changes"]
    ]
    return json.dumps(view, separators=(",", ":"), ensure_ascii=False)


@contextmanager
def _ledgers(url: str, tmp_path: Any, rules: Rules = REFERENCE_RULES) -> Iterator[tuple[Ledger, Ledger]]:
    """Two new ledgers under ``rules``, disposed of at the end: the first of ``url``'s kind (a new
    SQLite file, or the PostgreSQL database emptied), the second a SQLite file (the answers are the
    same texts on both kinds: tests/service/test_derived_answers.py)."""
    if url.startswith("sqlite"):
        url = f"sqlite:///{tmp_path}/first.db"
    else:
        reset_pg(url)
    with ExitStack() as stack:
        ledgers = []
        for each in (url, f"sqlite:///{tmp_path}/second.db"):
            db = open_database(each)
            stack.callback(db.dispose)
            ledger = Ledger(db)
            ledger.ensure_version(rules)
            ledgers.append(ledger)
        yield ledgers[0], ledgers[1]


def _apply_each(ledger: Ledger, bodies: list[dict[str, Any]], minimal: bool) -> list[str]:
    out = []
    for body in bodies:
        (outcome,) = ledger.apply([_sub(body, minimal)])
        assert outcome.status == "created", outcome
        out.append(outcome.body)
    return out


def test_summary_constants_name_the_documented_change_keys() -> None:
    """The summary keeps the four keys its answer model documents for a change."""
    assert tuple(RatingMove.model_fields) == SUMMARY_CHANGE_KEYS


def test_a_minimal_write_answers_the_projection_of_the_full_answer(db_url: str, tmp_path: Any) -> None:
    """Every form of match, under the reference rules and then a variant: byte for byte the projection."""
    with _ledgers(db_url, tmp_path) as (full_ledger, minimal_ledger):
        full, summaries = [], []
        for ledger, minimal, out in ((full_ledger, False, full), (minimal_ledger, True, summaries)):
            out += _apply_each(ledger, BODIES[:3], minimal)
            ledger.rerate(VARIANT, "variant")
            out += _apply_each(ledger, BODIES[3:], minimal)
        assert summaries == [_project(t) for t in full]
        assert "explanation" not in summaries[0] and '"match":' not in summaries[0]


def test_repeats_answer_in_the_form_each_one_asks(db_url: str, tmp_path: Any) -> None:
    """A minimal repeat of a full first answer gets its summary; a full repeat of a minimal first
    gets the full answer a full first would have got."""
    with _ledgers(db_url, tmp_path) as (full_ledger, minimal_ledger):
        full = _apply_each(full_ledger, BODIES, False)
        _apply_each(minimal_ledger, BODIES, True)
        again = full_ledger.apply([_sub(b, True) for b in BODIES])
        assert [o.body for o in again] == [_project(t) for t in full]
        again = minimal_ledger.apply([_sub(b, False) for b in BODIES])
        assert [o.status for o in again] == ["repeat"] * len(BODIES)
        assert [o.body for o in again] == full


def test_a_repeat_in_the_same_batch_answers_in_its_own_form(db_url: str, tmp_path: Any) -> None:
    """Full then minimal, and minimal then full, of one new match in one batch: each its own form."""
    with empty_ledger(db_url, str(tmp_path)) as ledger:
        a, b = BODIES[2], BODIES[0]
        out = ledger.apply([_sub(a, False), _sub(a, True), _sub(b, True), _sub(b, False)])
        assert [o.status for o in out] == ["created", "repeat", "created", "repeat"]
        assert out[1].body == _project(out[0].body)
        assert out[2].body == _project(out[3].body)
        (later,) = ledger.apply([_sub(b, False)])  # derived from the stored facts
        assert later.body == out[3].body


def test_a_voided_match_repeats_the_summary_of_its_voided_view(db_url: str, tmp_path: Any) -> None:
    """After a void, a minimal repeat answers the voided view's summary: voided, no changes."""
    with empty_ledger(db_url, str(tmp_path)) as ledger:
        _apply_each(ledger, BODIES[:2], False)
        ledger.void("d-1", "entered twice")
        (full,) = ledger.apply([_sub(BODIES[0], False)])
        (minimal,) = ledger.apply([_sub(BODIES[0], True)])
        assert minimal.body == _project(full.body)
        assert (json.loads(minimal.body)["voided"], json.loads(minimal.body)["changes"]) == (True, [])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=any_rules(), winners=st.lists(st.sampled_from(["a", "b", "draw"]), min_size=6, max_size=6))
def test_summaries_are_projections_under_any_rules(
    db_url: str, tmp_path_factory: pytest.TempPathFactory, rules: Rules, winners: list[str]
) -> None:
    """Under rule sets drawn from the whole declared space, the built summary is the projection."""
    bodies = [{**b, "winner": w} for b, w in zip(BODIES, winners, strict=True)]
    with _ledgers(db_url, tmp_path_factory.mktemp("rules"), rules) as (full_ledger, minimal_ledger):
        full = _apply_each(full_ledger, bodies, False)
        assert _apply_each(minimal_ledger, bodies, True) == [_project(t) for t in full]


def test_http_minimal_answers_say_the_preference_was_applied(api: Api) -> None:
    """201 and 200 with the summary and ``Preference-Applied``; without the header, the full answer."""
    headers = api.headers(api.write_key)
    r = api.client.post("/v1/matches", json=single("h-1"), headers=headers | MINIMAL)
    assert r.status_code == 201 and r.headers["preference-applied"] == "return=minimal"
    MatchSummary.model_validate_json(r.content)
    full = api.client.post("/v1/matches", json=single("h-1"), headers=headers)
    assert full.status_code == 200 and "preference-applied" not in full.headers
    assert r.text == _project(full.text)
    again = api.client.post("/v1/matches", json=single("h-1"), headers=headers | MINIMAL)
    assert (again.status_code, again.text) == (200, r.text)


def test_both_routes_read_the_preference_alike(tmp_path: Any) -> None:
    """The direct route and FastAPI's documented route answer the same to each form of the header."""
    preferences = [
        "return=minimal",
        "Return=Minimal",
        'respond-async, return="minimal"; x=1',
        "return=representation",
        "wait=10",
        "return=representation, return=minimal",
    ]
    runs = []
    for direct in (True, False):
        for api in make_api(f"sqlite:///{tmp_path}/{direct}.db", rate_limit=0):
            if not direct:
                app: Any = api.client.app
                app.direct = None
            answers = []
            for i, prefer in enumerate(preferences):
                headers = api.headers(api.write_key) | {"Prefer": prefer}
                r = api.client.post("/v1/matches", json=single(f"p-{i}"), headers=headers)
                answers.append((r.status_code, r.headers.get("preference-applied"), "explanation" in r.text))
            runs.append(answers)
    applied = ("return=minimal", False)
    assert [a[1:] for a in runs[0]] == [applied, applied, applied, (None, True), (None, True), (None, True)]
    assert runs[0] == runs[1]
