"""What waking another process costs on this machine: a pipe ping-pong between two processes.

The service's match writes hand each batch from the API process to the writer process, to the
database server and back: several wakes of a sleeping process a batch, where the bare-ASGI
ceiling of ``bench_service.py`` has almost none. On a virtual machine a wake on another CPU can
cost far more than on the same one, and the writes' ratio to the ceiling moves with it from one
machine to the next (docs/service-measurements.md, stop 48). This prints the round trip of one
byte each way through two pipes, ``--trips`` times, with the two processes on different CPUs, on
the same CPU, and where the scheduler puts them; best of ``--runs``. Linux only.

Usage::

    .venv/bin/python benchmarks/bench_wake.py [--trips 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import time


def round_trip_us(trips: int, parent_cpus: set[int] | None, child_cpus: set[int] | None) -> float:
    """Microseconds a round trip (a byte to the child and back), the processes on those CPUs."""
    to_child, from_parent = os.pipe()
    to_parent, from_child = os.pipe()
    before = os.sched_getaffinity(0)
    pid = os.fork()
    if pid == 0:
        if child_cpus is not None:
            os.sched_setaffinity(0, child_cpus)
        for _ in range(trips + 1):
            os.read(to_child, 1)
            os.write(from_child, b"x")
        os._exit(0)
    try:
        if parent_cpus is not None:
            os.sched_setaffinity(0, parent_cpus)
        os.write(from_parent, b"x")  # the first trip wakes the child once it is placed
        os.read(to_parent, 1)
        start = time.perf_counter()
        for _ in range(trips):
            os.write(from_parent, b"x")
            os.read(to_parent, 1)
        return (time.perf_counter() - start) / trips * 1e6
    finally:
        os.waitpid(pid, 0)
        os.sched_setaffinity(0, before)
        for fd in (to_child, from_parent, to_parent, from_child):
            os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trips", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    cases: list[tuple[str, set[int] | None, set[int] | None]] = [("unpinned", None, None)]
    cases.append(("same CPU", {cpus[0]}, {cpus[0]}))
    if len(cpus) > 1:
        cases.append(("two CPUs", {cpus[0]}, {cpus[1]}))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.trips:,} round trips, best of {args.runs}")
    for name, parent, child in cases:
        best = min(round_trip_us(args.trips, parent, child) for _ in range(args.runs))
        print(f"  {name:<9} {best:7.1f} µs a round trip (two wakes)")


if __name__ == "__main__":
    main()
