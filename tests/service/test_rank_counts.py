"""The players counted by rating (``rating_counts``, service/ledger/counts.py): equal to a count of
the player rows after every path that writes them, the rank read from them equal to a brute-force
rank, checked by verify, and filled by migration 0011."""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ledgers import empty_ledger
from sqlalchemy import update

from sedma_elo.batch.history import read_lined, write_matches
from sedma_elo.core.model import Match
from sedma_elo.core.rules import REFERENCE_RULES
from sedma_elo.service import Ledger
from sedma_elo.storage import downgrade, upgrade
from sedma_elo.storage.schema import rating_counts

PLAYERS = [f"p{i:02d}" for i in range(40)]
START = datetime(2026, 2, 1, tzinfo=UTC)


def _matches(n: int, prefix: str, seed: int) -> list[Match]:
    """Random one-against-one and two-against-two matches among 40 players, with draws."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        winner = rng.choice(("a", "b", "draw"))
        when = START + timedelta(minutes=i + 1000 * seed)
        if i % 4 == 0:
            a1, a2, b1, b2 = rng.sample(PLAYERS, 4)
            out.append(Match((a1, a2), (b1, b2), winner, {}, f"{prefix}{i}", when))  # type: ignore[arg-type]
        else:
            a, b = rng.sample(PLAYERS, 2)
            out.append(Match.single(a, b, winner, match_id=f"{prefix}{i}", played_at=when))  # type: ignore[arg-type]
    return out


def _rows(ledger: Ledger, sql: str) -> list[tuple[int, ...]]:
    with ledger.db.read.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(sql).all()]


def _check_counts(ledger: Ledger) -> None:
    """Every version's stored counts equal the player rows counted by rating here."""
    rows = _rows(ledger, "SELECT version_id, rating FROM player_ratings")
    want = Counter((int(v), int(r)) for v, r in rows)
    have = {(v, r): n for v, r, n in _rows(ledger, "SELECT version_id, rating, players FROM rating_counts")}
    assert {k: n for k, n in have.items() if n} == dict(want)


def _check_ranks(ledger: Ledger) -> None:
    """Each player's rank equals one plus the players above by (rating desc, id) in the active version."""
    vid = ledger.active_id()
    rows = _rows(ledger, f"SELECT player_id, rating FROM player_ratings WHERE version_id = {vid}")
    for pid, rating in rows:
        above = sum(1 for p, r in rows if r > rating or (r == rating and p < pid))
        assert ledger.around(pid, 0).items[0]["rank"] == above + 1


def test_counts_follow_the_batch_writer(db_url: str) -> None:
    """Batches of seven (players new and known, several matches each) keep counts and ranks exact."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(60, "m", 1), batch=7)
        _check_counts(ledger)
        _check_ranks(ledger)
        ledger.import_matches(_matches(45, "n", 2), batch=1)
        _check_counts(ledger)
        _check_ranks(ledger)


def test_counts_follow_import_void_rerate_and_activate(db_url: str) -> None:
    """The bulk paths: a history import, voids, a re-rate into a new version, activating the old one."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        path = Path(tmp) / "h.jsonl"
        write_matches(path, _matches(80, "h", 3))
        source, errors = read_lined(path)
        assert errors == []
        ledger.import_history(source)
        _check_counts(ledger)
        ledger.void("h5", "typo")
        _check_counts(ledger)
        _check_ranks(ledger)
        first = ledger.active_id()
        ledger.rerate(REFERENCE_RULES.replace(version="2.0", initial_rating=1400))
        _check_counts(ledger)
        _check_ranks(ledger)
        ledger.import_matches(_matches(20, "k", 4), batch=5)
        ledger.activate(first)  # catches the old version up with the 20 new matches
        _check_counts(ledger)
        _check_ranks(ledger)


def test_verify_names_a_wrong_count(db_url: str) -> None:
    """A count changed behind the ledger's back is a mismatch naming the version and rating."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(30, "m", 5))
        assert ledger.verify().ok
        vid = ledger.active_id()
        rating, players = _rows(ledger, "SELECT rating, players FROM rating_counts WHERE players > 0")[0]
        with ledger.db.begin_write() as conn:
            c = rating_counts.c
            conn.execute(update(rating_counts).where(c.rating == rating).values(players=players + 2))
        report = ledger.verify()
        assert report.mismatches == [
            f"version {vid}, rating {rating}: stored count of players {players + 2}, replay {players}"
        ]


def test_the_migration_counts_an_existing_ledger(db_url: str) -> None:
    """Down to 0010 and up again: the counts are filled from the player rows of every version."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_matches(50, "m", 6))
        ledger.rerate(REFERENCE_RULES.replace(version="2.0", initial_rating=1400), activate=False)
        downgrade(ledger.db, "0010_verify2")
        upgrade(ledger.db)
        _check_counts(ledger)
        assert len({v for v, _, _ in _rows(ledger, "SELECT * FROM rating_counts")}) == 2
