"""Microseconds per match to build the stored answer text of ``POST /v1/matches``.

The service writes, for every new match, the JSON text of its match view (the match, its sequence,
the ratings version and every player's explanation):
``sedma_elo.service.ledger.views.response_text``. This script builds ``--matches`` random
submissions through the service's own payload path (seeded, varied ratings, outcomes and counts),
rates them under the reference rules, reads each result's explanation once (``result.changes``,
built lazily by ``rate()`` and paid for whatever the answer's encoding), then times only the text,
for one-against-one and two-against-two matches.

The summary answer (``Prefer: return=minimal``: ``views.summary_text``) is timed too, and checked
to equal the full text's summary (``views.summary_of``) byte for byte.

The same answer is also encoded the plain way, for comparison: the view as a dict
(``views.match_view``, explanation sentences built per call) encoded by ``json.dumps``, by orjson
and by msgspec (each skipped if not installed), and each encoder's text is compared with the
hand-built one byte for byte (the stored answers' contract).

Usage::

    .venv/bin/python benchmarks/bench_response.py [--matches 5000] [--repeat 7] [--seed 1]

The best of ``--repeat`` passes over all the matches is reported (least disturbed by other
processes), as microseconds per match.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
from collections.abc import Callable
from typing import Any

from sedma_elo.core.engine import RatingResult, rate
from sedma_elo.core.rules import REFERENCE_RULES
from sedma_elo.service.ledger import VersionInfo, now_text
from sedma_elo.service.ledger.views import match_view, response_text, summary_of, summary_text, view_text
from sedma_elo.service.payload import MatchIn, Submission, submission_from_payload

VERSION = VersionInfo(1, "reference", REFERENCE_RULES, True, now_text())


def _stats(rng: random.Random) -> dict[str, int]:
    """Counts as a real match gives them: mostly small, sometimes past the caps."""
    return {
        "bad_moves": rng.choice((0, 0, 0, 1, 2, 3, 20)),
        "won_by_16": rng.choice((0, 0, 1, 2, 4)),
        "won_by_24": rng.choice((0, 0, 0, 1)),
        "won_by_4_and_last": rng.choice((0, 0, 1, 2)),
    }


def workload(n: int, team: bool, seed: int) -> list[tuple[Submission, RatingResult]]:
    """``n`` rated submissions among 1,000 players, their explanations already built."""
    rng = random.Random(seed)
    ids = [f"player-{i}" for i in range(1000)]
    ratings = {p: rng.randint(700, 2200) for p in ids}
    out = []
    for i in range(n):
        players = rng.sample(ids, 4 if team else 2)
        sides = (
            {"team_a": players[:2], "team_b": players[2:]}
            if team
            else {"player_a": players[0], "player_b": players[1]}
        )
        keys = players if team else ["a", "b"]
        payload = {
            "match_id": f"m-{i}",
            "played_at": "2026-11-29T12:00:00Z",
            "winner": rng.choice(("a", "a", "b", "b", "draw")),
            **sides,
            "stats": {key: _stats(rng) for key in keys},
        }
        sub = submission_from_payload(MatchIn.model_validate(payload))
        result = rate(sub.match, ratings, REFERENCE_RULES)
        result.changes  # noqa: B018  # built here so that the timing below is the text alone
        out.append((sub, result))
    return out


Encoder = Callable[[Submission, int, VersionInfo, RatingResult], str | bytes]


def _view(sub: Submission, seq: int, version: VersionInfo, result: RatingResult) -> dict[str, Any]:
    return match_view(json.loads(sub.body), seq, sub.played_at, version, result, False, None)


def encoders() -> dict[str, Encoder]:
    """The answer text by hand and through each installed JSON library."""
    out: dict[str, Encoder] = {
        "hand-built text": response_text,
        "dict + json.dumps": lambda sub, seq, v, r: view_text(_view(sub, seq, v, r)),
    }
    try:
        import orjson
    except ImportError:
        print("orjson is not installed: skipped")
    else:
        out["dict + orjson"] = lambda sub, seq, v, r: orjson.dumps(_view(sub, seq, v, r))
    try:
        import msgspec
    except ImportError:
        print("msgspec is not installed: skipped")
    else:
        encode = msgspec.json.Encoder().encode
        out["dict + msgspec"] = lambda sub, seq, v, r: encode(_view(sub, seq, v, r))
    return out


def same_bytes(work: list[tuple[Submission, RatingResult]], encode: Encoder) -> float:
    """The share of ``work`` whose text from ``encode`` equals the hand-built text byte for byte."""
    same = 0
    for seq, (sub, result) in enumerate(work, 1):
        text = encode(sub, seq, VERSION, result)
        raw = text if isinstance(text, bytes) else text.encode()
        same += raw == response_text(sub, seq, VERSION, result).encode()
    return same / len(work)


def microseconds_per_match(
    work: list[tuple[Submission, RatingResult]], repeat: int, text: Encoder = response_text
) -> float:
    """Best of ``repeat`` passes over ``work``: µs per ``text`` call (the hand-built text by default)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for seq, (sub, result) in enumerate(work, 1):
            text(sub, seq, VERSION, result)
        best = min(best, time.perf_counter() - start)
    return best / len(work) * 1e6


def main() -> None:
    """Print µs per match for 1-vs-1 and 2-vs-2 workloads."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--matches", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for name, team in (("1-vs-1", False), ("2-vs-2", True)):
        work = workload(args.matches, team, args.seed)
        base = 0.0
        for label, encode in encoders().items():
            us = microseconds_per_match(work, args.repeat, encode)
            base = base or us
            print(
                f"{name} {label:<18}: {us:6.1f} µs per match ({us / base:4.2f}x the hand-built text),"
                f" same bytes {same_bytes(work, encode):.1%}"
            )
        us = microseconds_per_match(work, args.repeat, summary_text)
        same = sum(
            summary_text(sub, seq, VERSION, r) == summary_of(response_text(sub, seq, VERSION, r))
            for seq, (sub, r) in enumerate(work, 1)
        ) / len(work)
        print(
            f"{name} {'summary (minimal)':<18}: {us:6.1f} µs per match ({us / base:4.2f}x the hand-built"
            f" text), the same bytes as the full text's summary {same:.1%}"
        )


if __name__ == "__main__":
    main()
