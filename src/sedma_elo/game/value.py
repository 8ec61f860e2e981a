"""What a round is worth: the exact value of every move in a known deal, and in sampled deals.

The **value** of a position for a side is the signed stake of the round's result under perfect play
by everybody from there: ``+stake`` when the side wins the round, ``-stake`` when it loses, the stake
being the record's ``stake_win`` (plain or 4 and last), ``stake_16`` or ``stake_24``. With the
default stakes the six outcomes are -3, -2, -1, +1, +2, +3 match points.

* :func:`reference_values` is a plain, card-by-card minimax over :class:`~.state.RoundState` (no
  pruning, no table): the reference, usable on small positions.
* :class:`ValueSolver` runs the compiled search of :mod:`._value_jit` (alpha-beta with a table, on
  rank counts) for a known deal (:meth:`ValueSolver.exact`) or for deals of the cards the mover has
  not seen (:meth:`ValueSolver.sampled`). It is tested to agree with the reference.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from .cards import ALL_CARDS, POINT_CARDS, cards_of
from .config import GameRules
from .solver import pack_hand
from .state import STOP, RoundState

__all__ = ["ValueSolver", "deal_classes", "move_key", "reference_values", "stakes_of"]

Stakes = tuple[int, int, int]
IntArray = npt.NDArray[np.int64]


def stakes_of(rules: GameRules) -> Stakes:
    """``(stake_win, stake_16, stake_24)`` of ``rules``."""
    return rules.stake_win, rules.stake_16, rules.stake_24


def move_key(move: int) -> int:
    """The key that merges equivalent moves: the card's rank, or ``-1`` for stop."""
    return -1 if move == STOP else move >> 2


def _round_value(state: RoundState, stakes: Stakes) -> int:
    res = state.result()
    stake = stakes[2] if res.kind == "24" else stakes[1] if res.kind == "16" else stakes[0]
    return stake if res.winner == 0 else -stake


def _minimax(state: RoundState, stakes: Stakes) -> int:
    if state.done:
        return _round_value(state, stakes)
    values = []
    for move in state.legal_moves():
        child = state.copy()
        child.play(move)
        values.append(_minimax(child, stakes))
    return max(values) if state.to_move % 2 == 0 else min(values)


def reference_values(state: RoundState, stakes: Stakes) -> dict[int, int]:
    """Every legal move's value for the mover's side, by exhaustive minimax over the real deal.

    Exponential: meant for positions a few tricks from the end (tests and cross-checks).
    """
    sign = 1 if state.to_move % 2 == 0 else -1
    out = {}
    for move in state.legal_moves():
        child = state.copy()
        child.play(move)
        out[move] = sign * _minimax(child, stakes)
    return out


@lru_cache(maxsize=1)
def _jit() -> ModuleType:
    from . import _value_jit

    return _value_jit


def _scalars(state: RoundState) -> tuple[int, ...]:
    """The search state besides the hands: pos, to_move, leader, winner, deciding, led, trick points,
    side 0's points, and which sides have taken a trick (bit per side)."""
    flags = (1 if state.tricks[0] else 0) | (2 if state.tricks[1] else 0)
    tp = (state.trick & POINT_CARDS).bit_count()
    return (
        state.pos,
        state.to_move,
        state.leader,
        state.winner,
        1 if state.deciding else 0,
        state.led,
        tp,
        state.points(0),
        flags,
    )


class ValueSolver:
    """The compiled value search with its transposition table (``2**table_bits`` entries, 48 bytes each).

    One solver serves any number of positions and deals; it is not thread-safe. ``nodes`` counts
    the positions searched.
    """

    def __init__(self, table_bits: int = 18) -> None:
        self._tt: IntArray = np.zeros((1 << table_bits, 6), dtype=np.int64)
        self._stamp = 1
        self._counter: IntArray = np.zeros(1, dtype=np.int64)

    @property
    def nodes(self) -> int:
        """Positions searched so far."""
        return int(self._counter[0])

    @staticmethod
    def candidates(state: RoundState) -> list[int]:
        """The distinct moves of the player to move as keys (ranks, ``-1`` for stop), in move order."""
        keys: list[int] = []
        for m in state.legal_moves():
            k = move_key(m)
            if k not in keys:
                keys.append(k)
        return keys

    def exact(self, state: RoundState, stakes: Stakes) -> dict[int, int]:
        """Each candidate's exact value (by key) for the mover's side, in the real deal (all cards known).

        ``state`` must be unfinished.
        """
        if state.done:
            raise ValueError("the round is over")
        jit: Any = _jit()
        cands = self.candidates(state)
        hands = np.zeros(4, dtype=np.int64)
        for s in range(state.n):
            hands[s] = pack_hand(state.hands[s])
        stock = np.array([c >> 2 for c in state.deck], dtype=np.int64)
        self._stamp += 1
        row = jit.root_values(
            hands,
            state.n,
            stock,
            *_scalars(state),
            np.array(cands, dtype=np.int64),
            np.array(stakes, dtype=np.int64),
            self._tt,
            self._stamp,
            self._counter,
        )
        sign = 1 if state.to_move % 2 == 0 else -1
        return {k: sign * int(v) for k, v in zip(cands, row, strict=True)}

    def listed(self, state: RoundState, stakes: Stakes, deals: IntArray) -> IntArray:
        """Exact values for the mover's side in each listed deal (rows of :func:`deal_classes`)."""
        return self._run(state, stakes, deals, 0, 0, deals.shape[0])

    def sampled(self, state: RoundState, stakes: Stakes, seed: int, first: int, count: int) -> IntArray:
        """Exact values for the mover's side in deals ``first .. first+count-1`` of the unseen cards.

        The mover sees their own hand, every card played and how many cards each other hand and the
        stock hold; each deal puts the other cards at random into the other hands and the stock
        order. Returns ``[count, len(candidates(state))]``; deal ``k`` depends only on ``seed`` and
        ``k`` (``seed`` is reduced to 64 bits).
        """
        return self._run(state, stakes, np.zeros((0, 0), dtype=np.int64), seed, first, count)

    def _run(
        self, state: RoundState, stakes: Stakes, listed: IntArray, seed: int, first: int, count: int
    ) -> IntArray:
        jit: Any = _jit()
        p = state.to_move
        known = np.zeros(4, dtype=np.int64)
        known[p] = pack_hand(state.hands[p])
        unseen = np.array(list(cards_of(ALL_CARDS & ~(state.hands[p] | state.played_mask()))), dtype=np.int64)
        sizes = np.zeros(4, dtype=np.int64)
        for s in range(state.n):
            if s != p:
                sizes[s] = state.hands[s].bit_count()
        cands = self.candidates(state)
        signed_seed = (seed & ((1 << 64) - 1)) - (1 << 64 if seed & (1 << 63) else 0)
        out: IntArray = jit.sampled_values(
            known,
            unseen,
            listed,
            sizes,
            state.n,
            *_scalars(state),
            np.array(cands, dtype=np.int64),
            np.array(stakes, dtype=np.int64),
            self._tt,
            self._stamp + 1,
            signed_seed,
            first,
            count,
            self._counter,
        )
        self._stamp += count + 1
        return out if p % 2 == 0 else -out


def deal_classes(state: RoundState, limit: int) -> tuple[IntArray, npt.NDArray[np.float64]] | None:
    """Every deal of the cards the mover has not seen, up to suits: ``(deals, weights)``, or ``None``
    when there are more than ``limit`` distinct ones.

    A deal gives each other seat (in seat order) a set of ranks of its hand's size and the stock a
    sequence of ranks. Each row of ``deals`` lists, as card codes of suit 0, the other hands' cards
    then the stock in order (the layout :meth:`ValueSolver.listed` takes); its weight is the number
    of card-level deals (hands as sets, the stock in order) it stands for, so weights are in
    proportion to the probability of the deal.
    """
    p = state.to_move
    unseen = ALL_CARDS & ~(state.hands[p] | state.played_mask())
    counts = [0] * 8
    for c in cards_of(unseen):
        counts[c >> 2] += 1
    sizes = [state.hands[s].bit_count() for s in range(state.n) if s != p]
    rows: list[list[int]] = []
    weights: list[float] = []

    def hands(seat: int, left: list[int], prefix: list[int], weight: float) -> bool:
        if seat == len(sizes):
            return stock(left, prefix, weight)
        return choose(seat, 0, sizes[seat], left, prefix, weight)

    def choose(seat: int, rank: int, need: int, left: list[int], prefix: list[int], weight: float) -> bool:
        if need == 0:
            return hands(seat + 1, left, prefix, weight)
        if rank == 8:
            return True
        for k in range(min(need, left[rank]), -1, -1):
            rest = left[:]
            rest[rank] -= k
            if not choose(
                seat, rank + 1, need - k, rest, prefix + [rank * 4] * k, weight * comb(left[rank], k)
            ):
                return False
        return True

    def stock(left: list[int], prefix: list[int], weight: float) -> bool:
        if sum(left) == 0:
            rows.append(prefix)
            weights.append(weight)
            return len(rows) <= limit
        for rank in range(8):
            if left[rank]:
                rest = left[:]
                rest[rank] -= 1
                if not stock(rest, [*prefix, rank * 4], weight * left[rank]):
                    return False
        return True

    if not hands(0, counts, [], 1.0):
        return None
    return np.array(rows, dtype=np.int64), np.array(weights, dtype=np.float64)
