"""Migration 0005_compact converts a ledger written by the 0002 code, and converts it back.

``data/ledger_0002.json`` holds the tables of a ledger that the code of revision 0002 wrote: one
against one and team matches, draws, statistics, ids beyond ASCII, a void, a re-rate under rules
that read games played, later matches and a second void. Its ``response`` column is what each
match's repeat answered then.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sedma_elo.core.model import Match
from sedma_elo.service import Ledger
from sedma_elo.service.payload import MatchIn, submission_from_match, submission_from_payload
from sedma_elo.storage import Database, downgrade, open_database, upgrade

FIXTURE = json.loads((Path(__file__).parent / "data" / "ledger_0002.json").read_text())
_BOOLEANS = {"active", "voided"}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def old_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database at revision 0002 holding the fixture's rows."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/old.db"
    else:
        url = request.getfixturevalue("new_pg_database")()
    db = open_database(url, migrate=False)
    try:
        upgrade(db, "0002")
        _load(db)
    finally:
        db.dispose()
    return url


def _load(db: Database) -> None:
    ph = "%s" if db.dialect == "postgresql" else "?"
    with db.begin_write() as conn:
        for table in ("rating_versions", "matches", "player_ratings", "rating_changes"):
            cols = FIXTURE[table]["columns"]
            rows = [
                tuple(bool(v) if c in _BOOLEANS else v for c, v in zip(cols, row, strict=True))
                for row in FIXTURE[table]["rows"]
            ]
            sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join([ph] * len(cols))})"
            conn.exec_driver_sql(sql, rows)
        if db.dialect == "postgresql":
            conn.exec_driver_sql("SELECT setval('ledger_sequence', (SELECT max(sequence) FROM matches))")
            conn.exec_driver_sql(
                "SELECT setval(pg_get_serial_sequence('rating_versions', 'id'),"
                " (SELECT max(id) FROM rating_versions))"
            )


def _old_matches() -> list[dict[str, Any]]:
    cols = FIXTURE["matches"]["columns"]
    return [dict(zip(cols, row, strict=True)) for row in FIXTURE["matches"]["rows"]]


def _repeat(ledger: Ledger, body: str) -> str:
    (outcome,) = ledger.apply([submission_from_payload(MatchIn.model_validate_json(body))])
    assert outcome.status == "repeat", outcome
    return outcome.body


def _with_ledger(url: str, run: Callable[[Ledger], Any]) -> Any:
    ledger = Ledger(open_database(url))
    try:
        return run(ledger)
    finally:
        ledger.db.dispose()


def test_the_upgrade_keeps_every_answer_and_verifies(old_url: str) -> None:
    """After the upgrade every repeat (voided ones too) answers the text it answered before; verify passes."""
    old = _old_matches()

    def check(ledger: Ledger) -> None:
        assert {m["match_id"]: _repeat(ledger, m["body"]) for m in old} == {
            m["match_id"]: m["response"] for m in old
        }
        report = ledger.verify()
        assert report.ok and report.matches == sum(1 for m in old if not m["voided"]), report.mismatches

    _with_ledger(old_url, check)


def test_the_upgraded_ledger_takes_new_matches(old_url: str) -> None:
    """A new match with a known and a new player is applied after the upgrade, and verify still passes."""

    def check(ledger: Ledger) -> None:
        (outcome,) = ledger.apply([submission_from_match(Match.single("alice", "zoe", "a", match_id="n-1"))])
        assert outcome.status == "created"
        assert ledger.get_player("zoe").matches_played == 1
        assert ledger.verify().ok

    _with_ledger(old_url, check)


def test_the_downgrade_restores_the_old_rows(old_url: str) -> None:
    """Up and down again: the 0002 tables hold the rows they held, answers included."""
    db = open_database(old_url)
    try:
        downgrade(db, "0002")
        cols = FIXTURE["matches"]["columns"]
        rows = db.query(f"SELECT {', '.join(cols)} FROM matches ORDER BY sequence")
        assert [[bool(v) if c in _BOOLEANS else v for c, v in zip(cols, r, strict=True)] for r in rows] == [
            [bool(v) if c in _BOOLEANS else v for c, v in zip(cols, r, strict=True)]
            for r in FIXTURE["matches"]["rows"]
        ]
        cols = FIXTURE["rating_changes"]["columns"]
        changes = db.query(f"SELECT {', '.join(cols)} FROM rating_changes ORDER BY 1, 2, 3")
        assert [list(r) for r in changes] == FIXTURE["rating_changes"]["rows"]
    finally:
        db.dispose()
