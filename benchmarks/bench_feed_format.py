"""The change feed's stored form: bytes of a ``match`` event and the cost of reading it as an item.

A ``match`` event is stored as a compact JSON array (``feed_events.match_event``) and expanded to the
item's object text when read (``feed_events.item_text``); rows stored before as the object itself
are read as they are. For a one-against-one and a two-against-two event of league-sized ids, this
prints the stored characters of both forms and the microseconds ``item_text`` takes on each (best
of ``--repeat`` runs of ``--number`` calls), and the same for building the stored text.

Usage::

    .venv/bin/python benchmarks/bench_feed_format.py [--number 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import timeit

from sedma_elo.service.ledger.feed_events import item_text, match_event, match_player

_WHEN = "2026-12-01T20:28:15.123456Z"


def _event(team: bool) -> str:
    ratings = [("p123456", 1500, 1516), ("p654321", 1500, 1484)]
    if team:
        ratings = [
            ("p123456", 1500, 1510),
            ("p23456", 1500, 1508),
            ("p654321", 1500, 1492),
            ("p7654", 1500, 1490),
        ]
    players = [match_player(*r) for r in ratings]
    return match_event(1, "lg00001234567", 1234567, "2015-03-02T10:00:00Z", players, _WHEN)[2]


def _best(fn: object, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for team in (False, True):
        compact = _event(team)
        whole = item_text(0, compact).replace('{"sequence":0,', "{", 1)  # the object form
        read_whole = _best(lambda w=whole: item_text(5, w), args.number, args.repeat)
        read_compact = _best(lambda c=compact: item_text(5, c), args.number, args.repeat)
        build = _best(lambda t=team: _event(t), args.number, args.repeat)
        label = "2 vs 2" if team else "1 vs 1"
        print(
            f"{label}: stored {len(whole)} -> {len(compact)} characters ({len(compact) / len(whole):.2f}x);"
            f" item_text {read_whole:.2f} -> {read_compact:.2f} us; building the compact event {build:.2f} us"
        )


if __name__ == "__main__":
    main()
