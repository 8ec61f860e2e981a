"""A rebuild's threads (service/ledger/ahead.py): the writing thread's order and errors, and a
re-rate whose write fails on that thread leaves the ledger as it was."""

from __future__ import annotations

import tempfile
import threading
import time
from typing import Any

import pytest
from ledgers import empty_ledger

from sedma_elo import REFERENCE_RULES, Match
from sedma_elo.service.ledger import ahead, bulk, versions


def test_behind_runs_every_item_in_order_on_another_thread() -> None:
    """Each submitted item is worked on once, in the order submitted, off the caller's thread."""
    done: list[tuple[int, str]] = []
    with ahead.behind(lambda i: done.append((i, threading.current_thread().name))) as submit:
        for i in range(5):
            submit(i)
    assert [i for i, _ in done] == [0, 1, 2, 3, 4]
    assert threading.current_thread().name not in {name for _, name in done}


def test_behind_not_threaded_runs_each_item_in_line() -> None:
    """threaded=False: each item is worked on at its submit, on the caller's own thread."""
    done: list[tuple[int, str]] = []
    with ahead.behind(lambda i: done.append((i, threading.current_thread().name)), threaded=False) as submit:
        submit(0)
        assert done == [(0, threading.current_thread().name)]
        submit(1)
    assert done == [(0, threading.current_thread().name), (1, threading.current_thread().name)]


def test_behind_raises_the_works_error_at_the_next_submit() -> None:
    """An item's error reaches the caller at the next submit, and later items are not worked on."""
    done: list[int] = []

    def work(i: int) -> None:
        if i == 1:
            raise ValueError("bad write")
        done.append(i)

    with pytest.raises(ValueError, match="bad write"), ahead.behind(work) as submit:
        for i in range(4):
            submit(i)
    assert done == [0]


def test_behind_raises_the_last_items_error_at_the_end() -> None:
    """The error of the last item submitted is raised when the block ends."""

    def work(i: int) -> None:
        raise ValueError(f"bad write {i}")

    with pytest.raises(ValueError, match="bad write 0"), ahead.behind(work) as submit:
        submit(0)


def test_behind_finishes_the_item_in_work_before_the_blocks_error_leaves() -> None:
    """When the block raises, the item in work is finished first (the connection is then free)."""
    finished = threading.Event()

    def work(_: int) -> None:
        time.sleep(0.2)
        finished.set()

    with pytest.raises(KeyError), ahead.behind(work) as submit:
        submit(0)
        raise KeyError("caller")
    assert finished.is_set()


def test_a_rerate_whose_write_fails_on_the_thread_leaves_the_ledger_as_it_was(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second chunk's write fails (after the first was written): the re-rate raises, no version
    or change of it stays, the ledger verifies and the next re-rate succeeds."""
    matches = [Match.single(f"p{i % 5}", f"p{(i + 1) % 5}", "a", match_id=f"m{i}") for i in range(12)]
    monkeypatch.setattr(bulk, "CHUNK", 3)
    real = versions.write_changes
    calls: list[int] = []

    def fail_second(raw: Any, pg: bool, version_id: int, changes: Any, fresh: str | None = None) -> None:
        calls.append(version_id)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        real(raw, pg, version_id, changes, fresh)

    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        assert ledger.import_matches(matches).refused == []
        before = ledger.db.query("SELECT version_id, count(*) FROM rating_changes GROUP BY version_id")
        monkeypatch.setattr(versions, "write_changes", fail_second)
        with pytest.raises(RuntimeError, match="disk full"):
            ledger.rerate(REFERENCE_RULES.replace(version="9", k_top=20), "k20")
        assert len(calls) == 2
        assert (
            ledger.db.query("SELECT version_id, count(*) FROM rating_changes GROUP BY version_id") == before
        )
        assert [v.label for v in ledger.versions()] == [REFERENCE_RULES.label]
        monkeypatch.setattr(versions, "write_changes", real)
        assert ledger.verify().ok
        assert ledger.rerate(REFERENCE_RULES.replace(version="9", k_top=20), "k20").active
