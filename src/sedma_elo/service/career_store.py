"""The busiest players' page summaries, stored on a thread of their own after an admin change.

An admin void, re-rate or activation answers first; :class:`CareerStorer` then runs
:meth:`Ledger.store_careers` off the request, so the route's answer and its duration (the request
metrics, the access log) do not include it (docs/service.md, "Page summaries after a bulk change").
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

__all__ = ["CareerStorer"]

_log = logging.getLogger(__name__)


class _Stores(Protocol):
    """What is run: :meth:`Ledger.store_careers` (``progress(done, total)`` after each player)."""

    def store_careers(self, *, progress: Callable[[int, int], None]) -> int: ...


class _Stopped(Exception):
    """Raised from the progress callback to end a run between two players."""


class CareerStorer:
    """Runs ``ledger.store_careers`` on a daemon thread, one run at a time.

    :meth:`request` during a run makes it run once more when it ends (the change may have come
    after the run chose its players). A failed run is logged and not retried: the states are a
    cache, and a page read folds the career without them. :meth:`stop` ends a run between two
    players and waits for its thread at most ``timeout`` seconds.
    """

    def __init__(self, ledger: _Stores) -> None:
        self._ledger = ledger
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None  # set while a run is going or about to
        self._again = False
        self._stopping = threading.Event()
        self._idle = threading.Event()
        self._idle.set()

    def request(self) -> None:
        """Store the page summaries soon (at once, or after the run going); nothing once stopped."""
        with self._lock:
            if self._stopping.is_set():
                return
            if self._thread is not None:
                self._again = True
                return
            self._idle.clear()
            self._thread = threading.Thread(target=self._run, name="sedma-elo-careers", daemon=True)
            self._thread.start()

    def wait(self, timeout: float) -> bool:
        """Wait until no run is going or due; whether that came within ``timeout`` seconds."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """End the run going between two players, and wait for its thread (``timeout`` seconds)."""
        self._stopping.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            try:
                self._ledger.store_careers(progress=self._check)
            except _Stopped:
                pass
            except Exception:  # a cache: the pages fold their careers without it
                _log.exception("storing the busiest players' page summaries failed")
            with self._lock:
                if not self._again or self._stopping.is_set():
                    self._thread = None
                    self._again = False
                    self._idle.set()
                    return
                self._again = False

    def _check(self, done: int, total: int) -> None:
        if self._stopping.is_set():
            raise _Stopped
