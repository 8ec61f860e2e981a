"""Process-wide tuning of a serving process, for the benchmark that measures whether it pays.

It changes the whole interpreter, so only a process that serves requests may change it: tests
build many apps in one process, and a library user's process is theirs. ``serve`` changes
nothing process-wide since 2026-12-06: each measure below stopped paying, and a measure that no
longer pays goes (issue 13). ``benchmarks/bench_write_paths.py`` (its ``freeze``,
``short-switch`` and ``switch-only`` variants) calls :func:`tune_process` to measure them again.

* ``gc.freeze()`` once the app had started (``serve`` did it from 2026-12-01 to 12-06) kept full
  collections from walking the start-up objects when the API process also wrote to the database;
  since the writes moved to a writer process it no longer paid: without it 1.023x and 1.008x the
  PostgreSQL writes/s (6 rounds of 8 s, 3 of 30 s) at 0.972x and 0.971x the CPU per request, the
  same p99, and SQLite 1.010x (docs/service-measurements.md, "A fast machine: PostgreSQL's row
  met, and what a second API process costs").
* A short GIL switch interval (0.1 ms, set by ``serve`` until 2026-12-02) gave 0.90x the writes/s
  on SQLite and 0.91x on PostgreSQL on a quiet machine, at 1.23x / 1.10x the server CPU per
  request.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["after_startup", "tune_process"]

_freeze_after_startup = False


def tune_process(*, freeze: bool = False, switch_interval: float | None = None) -> None:
    """Tune this process for serving: freeze the heap after start-up only if ``freeze``; set the GIL
    switch interval (seconds, > 0) only if ``switch_interval`` is given. Only
    ``benchmarks/bench_write_paths.py`` calls it (see the module docstring); call it once, before
    the server starts.

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
