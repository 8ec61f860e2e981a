"""Process-wide runtime tuning for a serving process, switched on by ``serve``, never by the app factory.

Both settings change the whole interpreter, so only the process that serves requests may change
them: tests build many apps in one process, and a library user's process is theirs.

* A short GIL switch interval: the writer thread gives up the GIL for every database call; with the
  default 5 ms it then waits behind the busy event loop for up to 5 ms each time.
* ``gc.freeze()`` once the app has started: full collections walking the long-lived start-up
  objects (modules, schemas, SQLAlchemy) paused the event loop for tens of ms.

Whether each still pays is measured by ``benchmarks/bench_write_paths.py`` (figures in
``docs/service.md``).
"""

from __future__ import annotations

import gc
import sys

__all__ = ["SWITCH_INTERVAL", "after_startup", "tune_process"]

#: GIL switch interval (seconds) of a serving process.
SWITCH_INTERVAL = 0.0001

_freeze_after_startup = False


def tune_process(*, switch_interval: bool = True, freeze: bool = True) -> None:
    """Tune this process for serving: set the switch interval now, freeze the heap after start-up.

    Call once, before the server starts (``sedma-elo serve`` and the ``--workers`` entry point do).
    """
    global _freeze_after_startup
    if switch_interval:
        sys.setswitchinterval(SWITCH_INTERVAL)
    _freeze_after_startup = freeze


def after_startup() -> None:
    """Called by the app's lifespan once the database is open: freeze the heap if serving asked to.

    No ``gc.collect()`` first: it would cost a process that starts many apps whole seconds.
    """
    if _freeze_after_startup:
        gc.freeze()
