"""Event-loop CPU per request of handing a write to the group writer and getting its outcome back.

The writer applies nothing (a stand-in session answers every submission at once), so what is left
is the hand-off itself: the queue, the wait and the wake-up of the event loop. Two ways, in
alternating rounds: ``wrap_future`` (each request awaits ``asyncio.wait_for(asyncio.wrap_future(f))``
on the writer thread's future, as before 12-01 evening) and ``loop future`` (what
:meth:`GroupWriter.submit` does now: an asyncio future the writer settles for the whole batch in
one ``call_soon_threadsafe``). Prints the event-loop thread's CPU µs per request (``thread_time``,
little moved by other jobs) and requests/s.

Usage::

    .venv/bin/python benchmarks/bench_writer_handoff.py [--requests 20000] [--rounds 3] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
from collections.abc import Iterator, Sequence
from typing import Any

import uvloop

from sedma_elo.service.ledger import ApplyOutcome
from sedma_elo.service.writer import GroupWriter


class _Session:
    def apply(self, subs: Sequence[Any], **_: Any) -> list[ApplyOutcome]:
        return [ApplyOutcome("created", "{}") for _ in subs]


class _Ledger:
    @contextlib.contextmanager
    def writer_session(self) -> Iterator[_Session]:
        yield _Session()


async def _drive(writer: GroupWriter, wrapped: bool, requests: int, concurrency: int) -> tuple[float, float]:
    slots = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with slots:
            if wrapped:
                await asyncio.wait_for(asyncio.wrap_future(writer.submit_nowait(None)), 10.0)  # type: ignore[arg-type]
            else:
                await writer.submit(None)  # type: ignore[arg-type]

    cpu, wall = time.thread_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(requests)))
    return (time.thread_time() - cpu) / requests * 1e6, requests / (time.perf_counter() - wall)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    cpus: dict[str, list[float]] = {"wrap_future": [], "loop future": []}
    for n in range(args.rounds):
        for name in cpus:
            writer = GroupWriter(_Ledger(), timeout=10.0)  # type: ignore[arg-type]
            writer.start()
            try:
                cpu, rate = uvloop.run(_drive(writer, name == "wrap_future", args.requests, args.concurrency))
            finally:
                writer.stop()
            cpus[name].append(cpu)
            batch = writer.applied / max(writer.batches, 1)
            print(f"  round {n + 1} {name:<12} loop CPU {cpu:6.1f} µs/request", end="")
            print(f"  {rate:8.0f} requests/s  batch {batch:.1f}")
    base = statistics.median(cpus["wrap_future"])
    for name, values in cpus.items():
        med = statistics.median(values)
        print(f"  {name:<12} median loop CPU {med:6.1f} µs/request, ratio {med / base:.3f}")


if __name__ == "__main__":
    main()
