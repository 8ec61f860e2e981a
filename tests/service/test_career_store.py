"""service/career_store.py: the page summaries stored off the request, one run at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from sedma_elo.service.career_store import CareerStorer


class _Ledger:
    """A stand-in for Ledger.store_careers: each run reports three players, the first run waiting
    at its second player until ``release`` is set."""

    def __init__(self, fail: bool = False) -> None:
        self.runs = 0
        self.players = 0
        self.at_second = threading.Event()
        self.release = threading.Event()
        self.fail = fail

    def store_careers(self, *, progress: Callable[[int, int], None]) -> int:
        self.runs += 1
        if self.fail:
            raise RuntimeError("database gone")
        for done in range(1, 4):
            if self.runs == 1 and done == 2:
                self.at_second.set()
                self.release.wait(10)
            self.players += 1
            progress(done, 3)
        return 3


def test_a_request_during_a_run_makes_one_more_run() -> None:
    """Two requests while the first run goes: one more run after it, not two."""
    ledger = _Ledger()
    storer = CareerStorer(ledger)
    storer.request()
    assert ledger.at_second.wait(10)
    storer.request()
    storer.request()
    ledger.release.set()
    assert storer.wait(10)
    assert ledger.runs == 2 and ledger.players == 6


def test_stop_ends_a_run_between_two_players() -> None:
    """stop() during a run: the player in hand finishes, no other starts, the thread ends."""
    ledger = _Ledger()
    storer = CareerStorer(ledger)
    storer.request()
    assert ledger.at_second.wait(10)
    stopper = threading.Thread(target=storer.stop)
    stopper.start()
    ledger.release.set()
    stopper.join(10)
    assert storer.wait(0) and ledger.players == 2
    storer.request()  # stopped: nothing more runs
    assert storer.wait(0) and ledger.runs == 1


def test_a_failed_run_is_logged_and_the_next_request_runs(caplog: pytest.LogCaptureFixture) -> None:
    """A run that raises is logged with its traceback; the storer stays usable."""
    ledger = _Ledger(fail=True)
    storer = CareerStorer(ledger)
    storer.request()
    assert storer.wait(10)
    assert "page summaries failed" in caplog.text
    storer.request()
    assert storer.wait(10) and ledger.runs == 2
