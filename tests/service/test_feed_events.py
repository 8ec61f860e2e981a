"""The feed's lock on PostgreSQL: write batches and a vacuum of ``change_events`` do not wait for
each other (ledger/feed_events.py)."""

from __future__ import annotations

import concurrent.futures
import json

import psycopg
import pytest

from sedma_elo.core.model import Match
from sedma_elo.service import Ledger, submission_from_match
from sedma_elo.service.ledger import now_text
from sedma_elo.service.ledger.feed_events import append_events
from sedma_elo.storage import libpq_url

pytestmark = pytest.mark.postgres

#: The lock a VACUUM, ANALYZE or CREATE INDEX CONCURRENTLY of a table holds while it runs.
VACUUM_LOCK = "LOCK TABLE change_events IN SHARE UPDATE EXCLUSIVE MODE"


def test_a_write_batch_does_not_wait_for_a_vacuum_of_the_feed(pg_ledger: Ledger, pg_database: str) -> None:
    """A batch commits while another connection holds the lock a VACUUM of change_events holds."""
    sub = submission_from_match(Match.single("p1", "p2", "a", match_id="m-1"))
    with psycopg.connect(libpq_url(pg_database)) as vacuum:
        vacuum.execute(VACUUM_LOCK)
        with concurrent.futures.ThreadPoolExecutor(1) as pool, pg_ledger.writer_session() as session:
            applied = pool.submit(session.apply, [sub])
            try:
                outcome = applied.result(timeout=10)
            finally:
                vacuum.rollback()  # on failure: let the waiting batch end before the pool is shut
    assert [o.status for o in outcome] == ["created"]
    assert '"kind":"match"' in pg_ledger.changes().items[-1]


def test_a_vacuum_of_the_feed_does_not_wait_for_an_append(pg_ledger: Ledger, pg_database: str) -> None:
    """While a transaction that appended to the feed is open, VACUUM change_events still runs."""
    url = libpq_url(pg_database)
    with psycopg.connect(url) as writer, psycopg.connect(url, autocommit=True) as other:
        # The feed's lock, taken as every append takes it, is held until this transaction ends.
        append_events(writer, [("void", 1, '{"kind":"void"}', now_text())])
        other.execute("SET lock_timeout = '5s'")
        other.execute("VACUUM change_events")  # before: LockNotAvailable after 5 s
        writer.commit()
    assert pg_ledger.changes().items[-1].startswith('{"sequence":1,"kind":"void"')


#: How a release before 2026-12-07 appended to the feed: the table lock, then max(sequence) + 1.
OLD_LOCK = "LOCK TABLE change_events IN EXCLUSIVE MODE"
OLD_APPEND = (
    "INSERT INTO change_events (sequence, kind, version_id, data, created_at)"
    " SELECT coalesce(max(sequence), 0) + 1, 'void', 1, '{\"kind\":\"void\"}', %s FROM change_events"
)


def _feed(ledger: Ledger) -> list[tuple[int, str]]:
    """The feed's ``(sequence, kind)`` pairs, oldest first."""
    return [(item["sequence"], item["kind"]) for item in map(json.loads, ledger.changes().items)]


def test_a_batch_waits_for_an_old_releases_append_and_follows_it(pg_ledger: Ledger, pg_database: str) -> None:
    """During an upgrade, a batch behind an old release's open append waits, then follows it."""
    sub = submission_from_match(Match.single("p1", "p2", "a", match_id="m-1"))
    with psycopg.connect(libpq_url(pg_database)) as old:
        old.execute(OLD_LOCK)
        old.execute(OLD_APPEND, (now_text(),))
        with concurrent.futures.ThreadPoolExecutor(1) as pool, pg_ledger.writer_session() as session:
            applied = pool.submit(session.apply, [sub])
            try:
                with pytest.raises(concurrent.futures.TimeoutError):
                    applied.result(timeout=0.5)  # held by the old release's table lock
            finally:
                old.commit()
            outcome = applied.result(timeout=10)
            retried = session.take_errors()
    assert [o.status for o in outcome] == ["created"]
    assert _feed(pg_ledger) == [(1, "void"), (2, "match")]
    assert retried == 0  # its sequence was read after the old append's commit, not before


def test_an_old_releases_append_waits_for_a_new_one_then_follows(pg_ledger: Ledger, pg_database: str) -> None:
    """During an upgrade, an old release's append behind a new one's open append waits, then follows it."""
    url = libpq_url(pg_database)
    with psycopg.connect(url) as new, psycopg.connect(url) as old:
        append_events(new, [("activate", 1, '{"kind":"activate"}', now_text())])
        with concurrent.futures.ThreadPoolExecutor(1) as pool:

            def old_append() -> None:
                old.execute(OLD_LOCK)
                old.execute(OLD_APPEND, (now_text(),))
                old.commit()

            appended = pool.submit(old_append)
            try:
                with pytest.raises(concurrent.futures.TimeoutError):
                    appended.result(timeout=0.5)  # the new append's insert holds the table
            finally:
                new.commit()
            appended.result(timeout=10)
    assert _feed(pg_ledger) == [(1, "activate"), (2, "void")]
