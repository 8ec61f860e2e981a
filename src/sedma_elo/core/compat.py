"""A drop-in port of the game client's C# method, with its parameter order.

For people porting from the game client: ``calculate_new_ratings`` takes the same arguments as
``CalculateNewRatings`` (the ``ref`` ratings become the return value) and returns the same numbers.
"""

from __future__ import annotations

from ..errors import ValidationError
from .engine import rate
from .model import Match, PlayerStats
from .rules import REFERENCE_RULES

__all__ = ["calculate_new_ratings"]

_A, _B = "player_a", "player_b"


def calculate_new_ratings(
    rating_a: int,
    rating_b: int,
    player_a_won: bool,
    bad_moves_a: int,
    bad_moves_b: int,
    won_by_16_a: int,
    won_by_16_b: int,
    won_by_24_a: int,
    won_by_24_b: int,
    won_by_4_and_last_a: int,
    won_by_4_and_last_b: int,
) -> tuple[int, int]:
    """Return ``(new_rating_a, new_rating_b)`` exactly as the published C# method computes them.

    Raises:
        ValidationError: a count is negative or not an int, a rating is out of range, or
            ``player_a_won`` is not a bool (the field is named).
    """
    if not isinstance(player_a_won, bool):
        raise ValidationError("player_a_won", f"must be a bool, got {type(player_a_won).__name__}")
    match = Match.single(
        _A,
        _B,
        "a" if player_a_won else "b",
        PlayerStats(bad_moves_a, won_by_16_a, won_by_24_a, won_by_4_and_last_a),
        PlayerStats(bad_moves_b, won_by_16_b, won_by_24_b, won_by_4_and_last_b),
    )
    result = rate(match, {_A: rating_a, _B: rating_b}, REFERENCE_RULES)
    new = result.new_ratings  # without building the explanation nobody reads here
    return new[_A], new[_B]
