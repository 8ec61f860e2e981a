"""The bulk path (kernel and fold over chunks of compact rows) stores exactly the ratings of the pure fold.

Each example builds a ledger under the reference rules, re-rates part of it under drawn rules into
an inactive version, writes the rest, activates that version (a catch-up rebuild), voids a match
(a rebuild of both versions from there) and compares every stored rating change and every player's
rating and match count with a fold over the matches, on both databases, through the kernel and
through the fold path, with chunks of three rows so that runs cross chunk boundaries.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledgers import empty_ledger
from sqlalchemy import update

from core.strategies import any_rules, team_history
from sedma_elo import REFERENCE_RULES, Match, Rules
from sedma_elo.batch.history import write_matches
from sedma_elo.core.fold import RatingState
from sedma_elo.service import Ledger
from sedma_elo.service.ledger import bulk, packed
from sedma_elo.storage.schema import rating_changes

Changes = dict[tuple[str, str], tuple[int, int]]


def _fold(matches: list[Match], rules: Rules) -> tuple[Changes, dict[str, tuple[int, int]]]:
    """Every change by (match id, player) and every final (rating, games) of one pure fold."""
    state = RatingState()
    changes: Changes = {}
    for m in matches:
        for c in state.apply(m, rules).changes:
            changes[(str(m.match_id), c.player_id)] = (c.rating_before, c.rating_after)
    return changes, {p: (state.ratings[p], state.games[p]) for p in state.ratings}


def _stored(ledger: Ledger, version: int) -> tuple[Changes, dict[str, tuple[int, int]]]:
    """What a version stores: every change by (match id, player) and every player row."""
    changes = {
        (str(mid), str(pid)): (int(b), int(a))
        for mid, pid, b, a in ledger.db.query(
            "SELECT m.match_id, p.player_id, rc.rating_before, rc.rating_after FROM rating_changes rc"
            " JOIN matches m ON m.sequence = rc.sequence JOIN players p ON p.id = rc.player_key"
            f" WHERE rc.version_id = {version}"
        )
    }
    rows = ledger.db.query(
        f"SELECT player_id, rating, matches_played FROM player_ratings WHERE version_id = {version}"
    )
    return changes, {str(p): (int(r), int(g)) for p, r, g in rows}


@pytest.fixture(params=["kernel", "fold"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The kernel (from the first match on) or the fold path, over chunks of three rows."""
    monkeypatch.setattr(bulk, "CHUNK", 3)
    monkeypatch.setattr(bulk, "KERNEL_FROM", 0 if request.param == "kernel" else 10**9)
    if request.param == "fold":
        monkeypatch.setattr(bulk, "_JIT_MODULE", "not.loaded")  # as if numba were not loaded yet
    return str(request.param)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=any_rules(), matches=team_history(), split=st.integers(0, 12), void=st.integers(0, 11))
def test_rebuilds_store_the_folds_ratings(
    db_url: str, path: str, rules: Rules, matches: list[Match], split: int, void: int
) -> None:
    """Re-rate, activate's catch-up and a void's rebuild store every change and rating of the fold."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        cut = split % (len(matches) + 1)
        assert ledger.import_matches(matches[:cut]).refused == []
        drawn = ledger.rerate(rules, "drawn", activate=False).id
        assert ledger.import_matches(matches[cut:]).refused == []
        ledger.activate(drawn)
        assert _stored(ledger, drawn) == _fold(matches, rules)
        gone = matches[void % len(matches)]
        ledger.void(str(gone.match_id))
        kept = [m for m in matches if m is not gone]
        assert _stored(ledger, drawn) == _fold(kept, rules)
        assert _stored(ledger, 1) == _fold(kept, REFERENCE_RULES)
        assert ledger.verify().ok


def test_verify_names_a_tampered_change_in_a_later_chunk(db_url: str, path: str) -> None:
    """A changed rating_after deep in the ledger is reported with its version, sequence and player."""
    matches = [Match.single(f"p{i % 4}", f"p{(i + 1) % 4}", "a", match_id=f"m{i}") for i in range(10)]
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(matches)
        assert ledger.verify().ok
        seq = int(ledger.db.query("SELECT sequence FROM matches WHERE match_id = 'm8'")[0][0])
        with ledger.db.begin_write() as conn:
            conn.execute(
                update(rating_changes)
                .where(rating_changes.c.sequence == seq, rating_changes.c.rating_before > 0)
                .values(rating_after=rating_changes.c.rating_after + 1)
            )
        report = ledger.verify()
        assert not report.ok
        assert len(report.mismatches) == 2
        assert all(f"version 1, sequence {seq}, player p" in line for line in report.mismatches)


def test_rerate_and_verify_draw_progress_bars(db_url: str, tmp_path: Path) -> None:
    """--progress draws the re-rate's and verify's bars on stderr even when not on a terminal."""
    from typer.testing import CliRunner

    from sedma_elo.cli import app

    runner = CliRunner()
    source = tmp_path / "in.csv"
    day = datetime(2026, 11, 1, tzinfo=UTC)
    write_matches(source, [Match.single("ann", "ben", "a", match_id="h-1", played_at=day)])
    assert runner.invoke(app, ["import", str(source), "--database-url", db_url]).exit_code == 0
    rules = tmp_path / "r.toml"
    REFERENCE_RULES.replace(version="9", k_top=20).save(rules)
    rerate = runner.invoke(app, ["ratings", "rerate", str(rules), "--progress", "--database-url", db_url])
    assert rerate.exit_code == 0 and "re-rate" in rerate.output
    checked = runner.invoke(app, ["verify", "--progress", "--database-url", db_url])
    assert checked.exit_code == 0 and "verify" in checked.output and "1/1" in checked.output


@pytest.mark.parametrize(
    "column, value",
    [("b1", "(SELECT max(id) + 7 FROM players)"), ("version_id", "99")],
    ids=["player-key", "version"],
)
def test_verify_reports_a_ledger_row_naming_no_row(db_url: str, path: str, column: str, value: str) -> None:
    """A match whose player key or version names no row (no foreign key checks it) fails verify."""
    matches = [Match.single(f"p{i % 4}", f"p{(i + 1) % 4}", "a", match_id=f"m{i}") for i in range(10)]
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(matches)
        seq = int(ledger.db.query("SELECT sequence FROM matches WHERE match_id = 'm5'")[0][0])
        with ledger.db.begin_write() as conn:
            conn.exec_driver_sql(f"UPDATE matches SET {column} = {value} WHERE sequence = {seq}")
        report = ledger.verify()
        assert f"sequence {seq}: a player key or the version id names no row" in report.mismatches


def test_blanks_is_a_sequence_of_empty_strings() -> None:
    """``Blanks(n)`` reads as a list of n empty strings: length, items, negative index, slices."""
    blanks, model = bulk.Blanks(5), [""] * 5
    assert len(blanks) == len(model) and list(blanks) == model
    assert blanks[-5] == "" and blanks[4] == ""
    assert list(blanks[1:4]) == model[1:4] and len(blanks[::2]) == len(model[::2])
    for outside in (5, -6):
        with pytest.raises(IndexError):
            blanks[outside]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(matches=team_history())
def test_chunks_hold_every_column_of_the_ledger_rows(
    db_url: str, monkeypatch: pytest.MonkeyPatch, matches: list[Match]
) -> None:
    """Chunks (the second players' counts read apart, for team matches) equal one SELECT of all columns."""
    monkeypatch.setattr(bulk, "CHUNK", 3)
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        assert ledger.import_matches(matches).refused == []
        columns = ", ".join(bulk.CHUNK_EXPRESSIONS)
        whole = ledger.db.query(f"SELECT {columns} FROM matches m WHERE NOT m.voided ORDER BY m.sequence")
        expected = [tuple(int(v) for v in row) for row in whole]
        with ledger.db.read.connect() as conn:
            raw = conn.connection.driver_connection
            pg = not db_url.startswith("sqlite")
            for read in (bulk.read_chunks, packed.verify_chunks):
                got = [tuple(row) for _, _, rows in read(raw, pg, 0, 2**62) for row in rows.tolist()]
                assert got == expected
