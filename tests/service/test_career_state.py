"""The stored career state (service/ledger/career_state.py): a summary folded from a stored state
plus the newer matches equals the whole-career reference :func:`sedma_elo.web.profile.career`,
after new matches and after a void."""

from __future__ import annotations

import json
import random
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ledgers import empty_ledger

from career_check import assert_summary_is_whole_careers
from sedma_elo.core.model import Match
from sedma_elo.service import Ledger
from sedma_elo.service.ledger import career as career_module
from sedma_elo.service.ledger.career_state import CareerFold, Meetings
from sedma_elo.storage import downgrade, upgrade

START = datetime(2026, 1, 5, 8, tzinfo=UTC)
RIVALS = [f"r{i}" for i in range(9)]


def _matches(n: int, prefix: str, seed: int) -> list[Match]:
    """``n`` matches of ``hero`` (one in five two against two), wins, losses and draws mixed."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        winner = rng.choice(("a", "a", "b", "draw"))
        when = START + timedelta(hours=3 * i + seed * 10_000)
        if i % 5 == 0:
            mate, o1, o2 = rng.sample(RIVALS, 3)
            out.append(Match(("hero", mate), (o1, o2), winner, {}, f"{prefix}{i}", when))  # type: ignore[arg-type]
        else:
            out.append(
                Match.single("hero", rng.choice(RIVALS), winner, match_id=f"{prefix}{i}", played_at=when)
            )  # type: ignore[arg-type]
    return out


def _stored(ledger: Ledger, player: str) -> tuple[int, int] | None:
    """The stored (through, rewrites) of the player's state in the active version, if any."""
    with ledger.db.read.connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT s.through, s.rewrites FROM career_states s JOIN players p ON p.id = s.player_key"
            " JOIN rating_versions v ON v.id = s.version_id AND v.active WHERE p.player_id = ?"
            if ledger.db.url.startswith("sqlite")
            else "SELECT s.through, s.rewrites FROM career_states s JOIN players p ON p.id = s.player_key"
            " JOIN rating_versions v ON v.id = s.version_id AND v.active WHERE p.player_id = %s",
            (player,),
        ).first()
    return None if row is None else (int(row[0]), int(row[1]))


def _last_sequence(ledger: Ledger, player: str) -> int:
    return ledger.player_history(player, limit=1, order="desc").items[0]["sequence"]  # type: ignore[no-any-return]


def test_a_long_career_is_stored_and_read_back_equal(db_url: str) -> None:
    """A first read stores the state through the last match; the second read, from it, is equal."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(240, "m", 1))
        assert _stored(ledger, "hero") is None
        assert_summary_is_whole_careers(ledger, "hero")
        assert _stored(ledger, "hero") == (_last_sequence(ledger, "hero"), 0)
        assert_summary_is_whole_careers(ledger, "hero")


def test_a_stored_state_is_extended_by_new_matches(db_url: str) -> None:
    """New matches after a stored state: the summary equals the reference, and is stored anew."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(150, "m", 2))
        assert_summary_is_whole_careers(ledger, "hero")
        through = _stored(ledger, "hero")
        ledger.import_matches(_matches(7, "n", 3))
        # seven new matches: folded, not stored (fewer than STORE_AFTER)
        assert_summary_is_whole_careers(ledger, "hero")
        assert _stored(ledger, "hero") == through
        ledger.import_matches(_matches(130, "o", 4))
        assert_summary_is_whole_careers(ledger, "hero")
        assert _stored(ledger, "hero") == (_last_sequence(ledger, "hero"), 0)


def test_a_void_makes_the_stored_state_unused(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a void of an early match the summary is the reference again, stored under the new count."""
    monkeypatch.setattr(career_module, "STORE_AFTER", 1)
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(120, "m", 5))
        assert_summary_is_whole_careers(ledger, "hero")
        for rival in RIVALS[:3]:
            assert_summary_is_whole_careers(ledger, rival)
        ledger.void("m3", "typo")
        ledger.void("m40", "typo")
        assert_summary_is_whole_careers(ledger, "hero")
        assert _stored(ledger, "hero") == (_last_sequence(ledger, "hero"), 2)
        for rival in RIVALS[:3]:
            assert_summary_is_whole_careers(ledger, rival)


def test_a_fold_in_two_parts_equals_the_fold_of_the_whole() -> None:
    """Folding rows A, storing as text, reading back and folding rows B equals folding A + B."""
    rng = random.Random(7)
    rows = []
    for seq in range(1, 301):
        two = rng.random() < 0.3
        rows.append((seq * 3, rng.randint(1300, 1700), rng.randint(0, 2), rng.randint(1, 20),
                     rng.randint(1, 20) if two else None, None if seq == 5 else seq * 1000))  # fmt: skip
    whole = CareerFold()
    whole.add(rows)
    for cut in (1, 77, 299):
        part = CareerFold()
        part.add(rows[:cut])
        again = CareerFold.from_text(part.to_text())
        again.add(rows[cut:])
        assert again == whole


def test_a_busy_database_skips_the_store_not_the_answer(db_url: str) -> None:
    """While a writer holds the lock (SQLite) or the stored row (PostgreSQL) the summary is still
    the reference; the state is not stored, and is stored by a later read."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(150, "m", 8))
        assert_summary_is_whole_careers(ledger, "hero")
        stored = _stored(ledger, "hero")
        ledger.import_matches(_matches(120, "n", 9))
        with ledger.db.begin_write() as conn:
            if not db_url.startswith("sqlite"):
                conn.exec_driver_sql("SELECT through FROM career_states FOR UPDATE")
            assert_summary_is_whole_careers(ledger, "hero")
            assert _stored(ledger, "hero") == stored
        assert_summary_is_whole_careers(ledger, "hero")
        assert _stored(ledger, "hero") == (_last_sequence(ledger, "hero"), 0)


def test_the_best_win_reads_the_other_side_by_sequence_equality_on_sqlite(tmp_path: Path) -> None:
    """SQLite searches the other side's changes of each win by its sequence, not by the newer range."""
    with empty_ledger("sqlite://", str(tmp_path)) as ledger:
        ledger.import_matches(_matches(30, "w", seed=3))
        sql = "EXPLAIN QUERY PLAN " + career_module._BEST_WIN.format(ph="?")
        with ledger.db.read.connect() as conn:
            plan = [str(row[3]) for row in conn.exec_driver_sql(sql, (1, "hero", 0))]
    other = [step for step in plan if step.startswith("SEARCH o ")]
    assert other and all("sequence=?" in step for step in other), plan


def _naive_meetings(rows: list[tuple[int, int]]) -> dict[int, list[int]]:
    """(opponent key, slot) pairs counted in a dict: the table :class:`Meetings` must hold."""
    table: dict[int, list[int]] = {}
    for key, slot in rows:
        table.setdefault(key, [0, 0, 0])[slot] += 1
    return table


_MEETING_ROWS = st.lists(st.tuples(st.integers(1, 40), st.integers(0, 2)), max_size=120)


@given(first=_MEETING_ROWS, then=_MEETING_ROWS)
def test_meetings_stored_then_added_equal_one_count(
    first: list[tuple[int, int]], then: list[tuple[int, int]]
) -> None:
    """A stored table read back, plus newer meetings, holds the counts of a dict over all of them."""
    part = Meetings()
    for key, slot in first:
        part.added.setdefault(key, [0, 0, 0])[slot] += 1
    again = Meetings.from_stored(part.to_text())
    for key, slot in then:
        again.added.setdefault(key, [0, 0, 0])[slot] += 1
    keys, counts = again.merged()
    want = _naive_meetings(first + then)
    assert dict(zip(keys.tolist(), counts.tolist(), strict=True)) == want
    assert keys.tolist() == sorted(want)


@given(rows=_MEETING_ROWS, top=st.integers(0, 10))
def test_most_played_keeps_the_top_and_their_ties(rows: list[tuple[int, int]], top: int) -> None:
    """most_played(top): every opponent met at least as often as the top-th most met one."""
    meetings = Meetings()
    for key, slot in rows:
        meetings.added.setdefault(key, [0, 0, 0])[slot] += 1
    keys, _ = meetings.most_played(top)
    table = _naive_meetings(rows)
    totals = sorted((sum(c) for c in table.values()), reverse=True)
    want = (
        set()
        if top == 0 or not totals
        else {k for k, c in table.items() if sum(c) >= totals[min(top, len(totals)) - 1]}
    )
    assert set(keys.tolist()) == want


def test_a_state_stored_with_meetings_as_a_json_list_reads_back() -> None:
    """A state written before meetings were stored as base64 (a flat JSON list) reads back equal."""
    fold = CareerFold()
    fold.add([(3, 1510, 0, 7, None, 1000), (5, 1500, 1, 9, 4, 2000), (8, 1520, 2, 7, None, None)])
    old = json.loads(fold.to_text())
    old[-1] = [7, 1, 1, 0, 9, 0, 0, 1, 4, 0, 0, 1]  # key, wins, draws, losses: as written before
    assert CareerFold.from_text(json.dumps(old)) == fold


def test_a_downgrade_before_the_base64_meetings_deletes_the_stored_states(db_url: str) -> None:
    """Code before migration 0014 would misread a state stored now: the downgrade deletes them all."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(120, "m", 6))
        assert_summary_is_whole_careers(ledger, "hero")
        assert _stored(ledger, "hero") is not None
        downgrade(ledger.db, "0013_import_index")
        with ledger.db.read.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM career_states").scalar_one() == 0
        upgrade(ledger.db)
        assert_summary_is_whole_careers(ledger, "hero")
