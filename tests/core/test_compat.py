"""The drop-in C# port against the reference vectors computed by the original method."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from sedma_elo.core.compat import calculate_new_ratings

GOLDEN = Path(__file__).parents[1] / "golden" / "reference_vectors.csv"


def _rows() -> list[dict[str, str]]:
    with GOLDEN.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_reference_vector_matches() -> None:
    """All 3,000 rows of the C# reference vectors are reproduced exactly."""
    rows = _rows()
    assert len(rows) == 3000
    mismatches = []
    for i, row in enumerate(rows, start=2):
        args = [int(row["rating_a"]), int(row["rating_b"]), row["player_a_won"] == "true"]
        args += [int(row[c]) for c in list(row)[3:11]]
        expected = (int(row["new_rating_a"]), int(row["new_rating_b"]))
        got = calculate_new_ratings(*args)  # type: ignore[arg-type]
        if got != expected:
            mismatches.append((i, got, expected))
    assert mismatches == []


def test_bool_required_for_player_a_won() -> None:
    """An int where the C# method takes a bool is refused, naming the field."""
    with pytest.raises(ValueError, match="player_a_won"):
        calculate_new_ratings(1000, 1000, 1, 0, 0, 0, 0, 0, 0, 0, 0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("position", "name"),
    [
        (3, "bad_moves_a"),
        (4, "bad_moves_b"),
        (5, "won_by_16_a"),
        (6, "won_by_16_b"),
        (7, "won_by_24_a"),
        (8, "won_by_24_b"),
        (9, "won_by_4_and_last_a"),
        (10, "won_by_4_and_last_b"),
    ],
)
def test_negative_count_names_the_argument(position: int, name: str) -> None:
    """A negative count is refused under its C# argument name, so the player is known."""
    args: list[object] = [1000, 1000, True, 0, 0, 0, 0, 0, 0, 0, 0]
    args[position] = -1
    with pytest.raises(ValueError, match=rf"^{name}: must be >= 0, got -1$"):
        calculate_new_ratings(*args)  # type: ignore[arg-type]


def test_rating_out_of_range_names_the_argument() -> None:
    """A rating outside the engine's range is refused as rating_a or rating_b, not by an internal id."""
    with pytest.raises(ValueError, match=r"^rating_b: must be within"):
        calculate_new_ratings(1000, 10**9, True, 0, 0, 0, 0, 0, 0, 0, 0)
