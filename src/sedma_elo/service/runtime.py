"""Process-wide tuning of a serving process: only ``serve`` (and its workers' entry point) calls it.

It changes the whole interpreter, so only a process that serves requests may change it: tests
build many apps in one process, and a library user's process is theirs.

* ``gc.freeze()`` once the app has started (``serve`` since 2026-12-01, dropped 12-06 at stop 38,
  back 12-06 at stop 40). A full collection walks every object the start-up made (about 140,000:
  FastAPI, pydantic, SQLAlchemy, psycopg) and finds nothing to free; on a slower machine one took
  57-97 ms, and the 10 M league's history reads (many rows, many objects) set one off about once a
  second: a stop of the event loop that made their p99 75-92 ms. Frozen, the same collection
  takes 0.7 ms: p99 21.7 ms and 1.18x the reads/s. The writes start no full collection (none in
  20 s of wrk) and do not move: without it 1.023x and 1.008x the PostgreSQL writes/s at stop 38,
  the same p99 (docs/service-measurements.md, "The reads at 10 M again" and "A fast machine:
  PostgreSQL's row met, and what a second API process costs").
* A short GIL switch interval (0.1 ms, set by ``serve`` until 2026-12-02) gave 0.90x the writes/s
  on SQLite and 0.91x on PostgreSQL on a quiet machine, at 1.23x / 1.10x the server CPU per
  request; ``benchmarks/bench_write_paths.py`` (its ``short-switch`` and ``switch-only`` variants)
  measures it again.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["after_startup", "tune_process"]

_freeze_after_startup = False


def tune_process(*, freeze: bool = False, switch_interval: float | None = None) -> None:
    """Tune this process for serving: freeze the heap after start-up only if ``freeze``; set the GIL
    switch interval (seconds, > 0) only if ``switch_interval`` is given. ``serve`` calls it with
    ``freeze=True``; ``benchmarks/bench_write_paths.py`` with its variants (see the module
    docstring). Call it once, before the server starts.

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
