"""The greedy rule of thumb: the move of the greedy bot and of the playouts in sampling."""

from __future__ import annotations

from .cards import POINT_CARDS, SEVENS, rank_mask
from .state import STOP, RoundState

__all__ = ["greedy_move"]

_PLAIN = ~(POINT_CARDS | SEVENS) & 0xFFFFFFFF


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def greedy_move(state: RoundState) -> int:
    """The greedy rule of thumb's move for the player to move (deterministic; always legal)."""
    h = state.hands[state.to_move]
    led = state.led
    if state.deciding:
        if state.trick & POINT_CARDS:
            same = h & rank_mask(led)
            return _lowest(same if same else h & SEVENS)
        return STOP
    if led < 0:
        plain = h & _PLAIN
        if plain:
            return _lowest(plain)
        non_seven = h & ~SEVENS
        return _lowest(non_seven if non_seven else h)
    if state.trick & POINT_CARDS:
        take = h & rank_mask(led) if led else 0
        if take:
            return _lowest(take)
        if h & SEVENS:
            return _lowest(h & SEVENS)
    throw = h & _PLAIN & ~rank_mask(led)
    if throw:
        return _lowest(throw)
    non_seven = h & ~SEVENS
    return _lowest(non_seven if non_seven else h)
