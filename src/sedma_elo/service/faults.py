"""Storage faults met while serving: turned into a project error, logged once per kind per interval.

A full disk or a lost database makes every request fail the same way; a traceback per request
(2 KB each, 21 MB in 20 s on a full disk, issue 12) buries everything else in the log. The
:class:`FailureLog` writes one warning line per failure kind per :attr:`FailureLog.interval`
seconds, saying how many more of that kind it did not print.
"""

from __future__ import annotations

import logging
import threading
import time

from ..errors import StorageUnavailableError
from ..storage.faults import storage_unavailable

__all__ = ["FAILURES", "FailureLog", "storage_fault"]


class FailureLog:
    """One log line per failure kind per ``interval`` seconds, with the count of those not printed."""

    def __init__(self, logger: logging.Logger, interval: float = 10.0) -> None:
        self.logger = logger
        self.interval = interval
        self._lock = threading.Lock()
        self._kinds: dict[str, tuple[float, int]] = {}  # kind -> (when last printed, not printed since)

    def record(self, kind: str, detail: str) -> None:
        """Count one failure of ``kind``; print it unless a line of that kind was printed lately."""
        now = time.monotonic()
        with self._lock:
            last, unprinted = self._kinds.get(kind, (float("-inf"), 0))
            if now - last < self.interval:
                self._kinds[kind] = (last, unprinted + 1)
                return
            self._kinds[kind] = (now, 0)
        more = f" ({unprinted} more since the last line)" if unprinted else ""
        self.logger.warning("database unavailable: %s: %s%s", kind, detail, more)


#: The service's log of storage faults.
FAILURES = FailureLog(logging.getLogger("sedma_elo.service.faults"))


def storage_fault(exc: BaseException) -> StorageUnavailableError | None:
    """``exc`` as a :class:`StorageUnavailableError` (logged through :data:`FAILURES`), or None.

    None means ``exc`` is not a storage fault (see :func:`sedma_elo.storage.faults.storage_unavailable`).
    """
    err = storage_unavailable(exc)
    if err is not None:
        cause = getattr(exc, "orig", None) or exc
        first = str(cause).strip().splitlines()[:1]
        FAILURES.record(err.kind, f"{type(cause).__name__}: {first[0] if first else ''}")
    return err
