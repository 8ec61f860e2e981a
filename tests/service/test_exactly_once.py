"""Exactly once where it can break: inside one write batch, in the database schema, and in a race.

Written against the public API (Ledger.apply, the HTTP route's status codes, the tables), not the
ledger's internals.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from sedma_elo.core.model import Match
from sedma_elo.errors import ConflictError, NotFoundError
from sedma_elo.service import Ledger
from sedma_elo.service.payload import submission_from_match
from sedma_elo.storage import open_database
from sedma_elo.storage.partitions import is_version_table
from sedma_elo.storage.schema import metadata


def _sub(match_id: str, a: str = "alice", b: str = "bob", winner: str = "a") -> Any:
    return submission_from_match(Match.single(a, b, winner, match_id=match_id))  # type: ignore[arg-type]


def _played(ledger: Ledger, player_id: str) -> int:
    """Matches the player has in the active version (0 for a player the ledger never rated)."""
    try:
        return ledger.get_player(player_id).matches_played
    except NotFoundError:
        return 0


def test_same_id_with_another_body_in_one_batch_is_a_conflict(db_url: str) -> None:
    """In one batch: the first body is created, a different body under its id conflicts, a repeat repeats."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        out = ledger.apply([_sub("m1"), _sub("m1", winner="b"), _sub("m1"), _sub("m2", "cyd", "dan")])
        assert [o.status for o in out] == ["created", "error", "repeat", "created"]
        assert isinstance(out[1].error, ConflictError)
        assert "m1" in str(out[1].error)
        assert out[2].body == out[0].body
        stored = dict((m.match_id, m) for _, m in ledger.ledger())
        assert stored["m1"].winner == "a"  # the conflicting body changed nothing
        assert ledger.get_player("alice").matches_played == 1
        assert ledger.verify().ok
    finally:
        ledger.db.dispose()


def test_same_id_with_other_players_in_one_batch_is_a_conflict(db_url: str) -> None:
    """In one batch, a second match under a used id with other players is refused; they are not rated."""
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        out = ledger.apply([_sub("m1"), _sub("m1", "cyd", "dan")])
        assert [o.status for o in out] == ["created", "error"]
        assert [_played(ledger, p) for p in ("alice", "bob", "cyd", "dan")] == [1, 1, 0, 0]
    finally:
        ledger.db.dispose()


def test_migrations_build_exactly_the_declared_schema(db_url: str) -> None:
    """The Alembic migrations create what storage/schema.py declares (no missing constraint or index)."""
    db = open_database(db_url)
    try:
        with db.write.connect() as conn:
            # procrastinate's own tables (PostgreSQL, 0006_queue) are its schema, not declared here;
            # nor are the versions' partitions of rating_changes (0012), made one per version.
            ours = {
                "include_name": lambda name, *_: (
                    not (str(name).startswith("procrastinate_") or is_version_table(str(name)))
                )
            }
            diff = compare_metadata(MigrationContext.configure(conn, opts=ours), metadata)
        assert diff == []
    finally:
        db.dispose()


def test_the_database_refuses_a_second_row_with_a_used_match_id(db_url: str) -> None:
    """After the migrations, matches.match_id has a UNIQUE constraint (or unique index) in the database."""
    db = open_database(db_url)
    try:
        insp = inspect(db.write)
        unique = [tuple(u["column_names"]) for u in insp.get_unique_constraints("matches")]
        unique += [tuple(i["column_names"]) for i in insp.get_indexes("matches") if i.get("unique")]
        assert ("match_id",) in unique
    finally:
        db.dispose()


@pytest.mark.postgres
def test_a_race_of_one_id_with_different_players_stores_one_match(new_pg_database: Any) -> None:
    """Two ledgers (real connections) apply the same ids with different players at once: one wins each id."""
    url = new_pg_database()
    ledgers = [Ledger(open_database(url, pool_size=2)) for _ in range(2)]
    ledgers[0].ensure_version()
    rounds = 25
    barrier = threading.Barrier(2)
    results: list[list[str]] = [[], []]

    def racer(side: int) -> None:
        a, b = ("alice", "bob") if side == 0 else ("cyd", "dan")
        for i in range(rounds):
            barrier.wait(timeout=30)
            (outcome,) = ledgers[side].apply([_sub(f"race-{i}", a, b)])
            results[side].append(outcome.status)

    threads = [threading.Thread(target=racer, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    try:
        assert all(len(r) == rounds for r in results)
        for i in range(rounds):
            assert sorted((results[0][i], results[1][i])) == ["created", "error"], i
        stored = {m.match_id: m for _, m in ledgers[0].ledger()}
        assert len(stored) == rounds
        for i in range(rounds):
            winner = 0 if results[0][i] == "created" else 1
            assert stored[f"race-{i}"].team_a == (("alice",) if winner == 0 else ("cyd",))
        played = {
            p: ledgers[0].get_player(p).matches_played
            for p in ("alice", "bob", "cyd", "dan")
            if any(x["player_id"] == p for x in ledgers[0].search_players(p))
        }
        assert played.get("alice", 0) == results[0].count("created")
        assert played.get("cyd", 0) == results[1].count("created")
        assert ledgers[0].verify().ok
    finally:
        for ledger in ledgers:
            ledger.db.dispose()


def test_a_refused_match_repeated_in_one_batch_is_refused_each_time(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two copies of a match the engine refuses, in one batch, both get that refusal; nothing is stored."""
    from sedma_elo.core.fold import RatingState
    from sedma_elo.errors import ValidationError

    # Valid rules keep every rating in range, so the engine's refusal of match m2 is injected.
    real_rate = RatingState.rate

    def refuse_m2(self: RatingState, match: Match, rules: Any = None) -> Any:
        if match.match_id == "m2":
            raise ValidationError("ratings.alice", "refused by the test")
        return real_rate(self, match) if rules is None else real_rate(self, match, rules)

    monkeypatch.setattr(RatingState, "rate", refuse_m2)
    ledger = Ledger(open_database(db_url))
    try:
        ledger.ensure_version()
        (first,) = ledger.apply([_sub("m1")])
        assert first.status == "created"
        out = ledger.apply([_sub("m2", "alice", "cyd"), _sub("m2", "alice", "cyd")])
        assert [o.status for o in out] == ["error", "error"]
        assert all(isinstance(o.error, ValidationError) for o in out)
        assert out[0].error is out[1].error
        assert ledger.ledger_size() == 1
    finally:
        ledger.db.dispose()
