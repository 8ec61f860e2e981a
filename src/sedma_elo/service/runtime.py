"""Process-wide runtime tuning for a serving process, switched on by ``serve``, never by the app factory.

It changes the whole interpreter, so only the process that serves requests may change it: tests
build many apps in one process, and a library user's process is theirs.

* The heap is not frozen. ``gc.freeze()`` once the app had started (``serve`` did it from
  2026-12-01 to 12-06) kept full collections from walking the start-up objects when the API process
  also wrote to the database; since the writes moved to a writer process it no longer paid:
  without it 1.023x and 1.008x the PostgreSQL writes/s (6 rounds of 8 s, 3 of 30 s) at 0.972x and
  0.971x the CPU per request, the same p99, and SQLite 1.010x (docs/service.md, "A fast machine:
  PostgreSQL's row met, and what a second API process costs"). ``tune_process(freeze=True)`` still
  does it, for the benchmark that measures it.
* The GIL switch interval stays the interpreter's (5 ms). A short one (0.1 ms, set here until
  2026-12-02) gave 0.90x the writes/s on SQLite and 0.91x on PostgreSQL on a quiet machine, at
  1.23x / 1.10x the server CPU per request; ``tune_process(switch_interval=...)`` still sets one
  for the benchmark that measures it.

Whether each still pays is measured by ``benchmarks/bench_write_paths.py`` (figures in
``docs/service.md``).
"""

from __future__ import annotations

import gc
import sys

__all__ = ["after_startup", "tune_process"]

_freeze_after_startup = False


def tune_process(*, freeze: bool = False, switch_interval: float | None = None) -> None:
    """Tune this process for serving: freeze the heap after start-up only if ``freeze``; set the GIL
    switch interval (seconds, > 0) only if ``switch_interval`` is given. ``serve`` calls it with
    neither (see the module docstring): only ``benchmarks/bench_write_paths.py`` sets them.

    Call once, before the server starts (``sedma-elo serve`` and the ``--workers`` entry point do).

    Raises:
        ValueError: ``switch_interval`` is not positive.
    """
    global _freeze_after_startup
    if switch_interval is not None:
        sys.setswitchinterval(switch_interval)
    _freeze_after_startup = freeze


def after_startup() -> None:
    """Called by the app's lifespan once the database is open: freeze the heap if serving asked to.

    No ``gc.collect()`` first: it would cost a process that starts many apps whole seconds.
    """
    if _freeze_after_startup:
        gc.freeze()
