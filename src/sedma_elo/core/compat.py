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
_ARGUMENTS = {f"ratings.{_A}": "rating_a", f"ratings.{_B}": "rating_b"}


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
        ValidationError: a count is negative, above 1,000,000 or not an int, a rating is out of
            range, or ``player_a_won`` is not a bool; the argument is named (``bad_moves_a``,
            ``rating_b``...).
    """
    if not isinstance(player_a_won, bool):
        raise ValidationError("player_a_won", f"must be a bool, got {type(player_a_won).__name__}")
    # Errors are renamed to the C# argument names (bad_moves_a, rating_b...), so that they say
    # which player's value is wrong; the checks themselves are the model's, on the good path free.
    try:
        stats_a = PlayerStats(bad_moves_a, won_by_16_a, won_by_24_a, won_by_4_and_last_a)
    except ValidationError as exc:
        raise ValidationError(f"{exc.field}_a", exc.reason) from None
    try:
        stats_b = PlayerStats(bad_moves_b, won_by_16_b, won_by_24_b, won_by_4_and_last_b)
    except ValidationError as exc:
        raise ValidationError(f"{exc.field}_b", exc.reason) from None
    match = Match.single(_A, _B, "a" if player_a_won else "b", stats_a, stats_b)
    try:
        result = rate(match, {_A: rating_a, _B: rating_b}, REFERENCE_RULES)
    except ValidationError as exc:
        raise ValidationError(_ARGUMENTS.get(exc.field, exc.field), exc.reason) from None
    new = result.new_ratings  # without building the explanation nobody reads here
    return new[_A], new[_B]
