"""Event-loop CPU of one match write's own steps, in process, this code against another checkout's.

The steps the direct write route runs on the event loop around the hand-off to the writer (which
``bench_writer_handoff.py`` measures): a request id, the body checks (content type, UTF-8, repeated
keys), pydantic's parse, the :class:`Submission` (the engine's match, the canonical text and its
hash) and the answer's ``Response``. Each is timed on the same body (a 1-vs-1 match with
statistics, as ``bench_service.py`` posts) with ``thread_time``, so other jobs on the machine move
the figures little. ``--before OLD/src`` runs the same steps on that checkout's code in a
subprocess, in alternating rounds, and prints each step's ratio.

Usage::

    .venv/bin/python benchmarks/bench_write_request.py [--rounds 5] [--number 20000] [--before OLD/src]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BODY = (
    b'{"match_id":"b-1-12345","player_a":"p000123","player_b":"p004567","winner":"a",'
    b'"stats":{"a":{"won_by_16":1},"b":{"bad_moves":2}}}'
)
STEPS = ("request id", "body checks", "pydantic parse", "submission", "answer", "all")


def _steps() -> dict[str, Callable[[], Any]]:
    """The steps on this interpreter's ``sedma_elo`` (this checkout's or ``PYTHONPATH``'s)."""
    from sedma_elo.service.api.bodies import body_refusal
    from sedma_elo.service.observability.request_id import pick_request_id
    from sedma_elo.service.payload import MatchIn, submission_from_payload

    try:  # this branch's answer; older code built a starlette Response
        from sedma_elo.service.api.asgi import JsonText

        def answer(text: str) -> Any:
            return JsonText(text, 201)
    except ImportError:
        from fastapi.responses import Response

        def answer(text: str) -> Any:
            return Response(text, status_code=201, media_type="application/json")

    payload = MatchIn.model_validate_json(BODY)
    text = submission_from_payload(payload).body

    def everything() -> Any:
        pick_request_id([])
        body_refusal("application/json", BODY)
        sub = submission_from_payload(MatchIn.model_validate_json(BODY))
        return answer(sub.body)

    return {
        "request id": lambda: pick_request_id([]),
        "body checks": lambda: body_refusal("application/json", BODY),
        "pydantic parse": lambda: MatchIn.model_validate_json(BODY),
        "submission": lambda: submission_from_payload(payload),
        "answer": lambda: answer(text),
        "all": everything,
    }


def measure(number: int) -> dict[str, float]:
    """CPU µs per call of each step, ``number`` calls each."""
    out = {}
    for name, step in _steps().items():
        step()
        t0 = time.thread_time()
        for _ in range(number):
            step()
        out[name] = (time.thread_time() - t0) / number * 1e6
    return out


def _measure_in(before: str | None, number: int) -> dict[str, float]:
    if before is None:
        return measure(number)
    env = {**os.environ, "PYTHONPATH": str(Path(before).resolve())}
    cmd = [sys.executable, __file__, "--child", str(number)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return {k: float(v) for k, v in json.loads(out).items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--before", metavar="OLD/src", help="the src folder of the code to compare with")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    runs: dict[str, list[dict[str, float]]] = {"this": [], "before": []}
    for _ in range(args.rounds):
        runs["this"].append(_measure_in(None, args.number))
        if args.before:
            runs["before"].append(_measure_in(args.before, args.number))
    for step in STEPS:
        mine = statistics.median(r[step] for r in runs["this"])
        line = f"  {step:<15} {mine:7.2f} µs"
        if args.before:
            old = statistics.median(r[step] for r in runs["before"])
            line += f"   before {old:7.2f} µs   this / before {mine / old:.3f}"
        print(line)


if __name__ == "__main__":
    main()
