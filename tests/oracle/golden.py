"""The golden CSV files and the rule sets their rows were computed with."""

from __future__ import annotations

import csv
from pathlib import Path

from sedma_elo import MAX_RATING, MIN_RATING, REFERENCE_RULES, KTier, Rules
from sedma_elo.batch.history import COUNT_COLUMNS

from .csharp import ODD_K, Case

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


#: The C# method's parameters in order: ratings, winner, then the counts in the history files' order.
INPUT_COLUMNS = ("rating_a", "rating_b", "player_a_won", *COUNT_COLUMNS)

#: The seed method with K = 41/33/25/17 (the ``odd_k`` variant of :mod:`oracle.csharp`).
ODD_K_RULES: Rules = REFERENCE_RULES.replace(
    name="odd_k",
    k_tiers=(KTier(1200, ODD_K[0]), KTier(1800, ODD_K[1]), KTier(2200, ODD_K[2])),
    k_top=ODD_K[3],
)
RULES = {"reference": REFERENCE_RULES, "odd_k": ODD_K_RULES}


def read(name: str) -> list[dict[str, str]]:
    """The rows of ``tests/golden/<name>`` as dicts (rows without a ``rules`` column get ``reference``)."""
    with (GOLDEN / name).open(newline="") as fh:
        return [{"rules": "reference", **row} for row in csv.DictReader(fh)]


def case(row: dict[str, str]) -> Case:
    """The C# method's arguments of a golden row."""
    values = [int(row[c]) if c != "player_a_won" else row[c] == "true" for c in INPUT_COLUMNS]
    return tuple(values)  # type: ignore[return-value]


def result(row: dict[str, str]) -> tuple[int, int]:
    """The ratings the C# method returned for a golden row."""
    return int(row["new_rating_a"]), int(row["new_rating_b"])


def within_range(ratings: tuple[int, int]) -> tuple[int, int]:
    """A C# result as the port must give it: every rating held inside [MIN_RATING, MAX_RATING].

    The C# method has no rating range; the port clamps each update into it so that no rule set can
    push a rating where later matches would be refused (``docs/rules.md``, "The rating range").
    Inside the range the two agree exactly.
    """
    a, b = (min(max(r, MIN_RATING), MAX_RATING) for r in ratings)
    return a, b
