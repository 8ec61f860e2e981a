"""Perfect-information Monte Carlo: the value of each move while some cards are hidden.

The player to move knows their own hand, every card already played, and how many cards each other
hand and the stock hold. A *world* deals the unseen cards at random into the other hands and the
stock (in a random order), consistent with that knowledge. In each world every candidate move is
played, then the round is played on by the greedy rule of thumb for every seat until the stock is
empty, and a two-player round is then solved exactly (a four-player round is played to its end by
the greedy rule). A move's value is its mean final half-points for the mover's side over the worlds;
every move is tried in the same worlds so their difference is not blurred by the deal.

Solving each world exactly from the first trick (24 cards still in the stock) is far beyond the
speed goals, hence the greedy playout to the empty stock: the estimate is that of a strong endgame
player who plays the middle game by rule of thumb. Play-history inferences (e.g. "they did not take,
so they hold no seven") are not used.
"""

from __future__ import annotations

import random

from .cards import ALL_CARDS, N_CARDS, cards_of
from .greedy import greedy_move
from .solver import HALF_POINTS_TOTAL, Solver, final_value
from .state import RoundState
from .value import move_key

__all__ = ["move_key", "pimc_values", "pimc_world_values", "playout_value"]


def playout_value(state: RoundState, side: int, solver: Solver) -> int:
    """``side``'s final half-points after greedy play to the empty stock, then perfect play (2 players)."""
    two = state.n == 2
    while not state.done and (not two or state.pos < N_CARDS):
        state.play(greedy_move(state))
    if two:
        return final_value(state, side, solver)
    v0 = 2 * state.points(0) + (1 if state.last_winner & 1 == 0 else 0)
    return v0 if side == 0 else HALF_POINTS_TOTAL - v0


def pimc_world_values(
    state: RoundState, rng: random.Random, samples: int, solver: Solver
) -> dict[int, list[int]]:
    """For each candidate (by :func:`move_key`), the mover side's final half-points in each of
    ``samples`` worlds, the same worlds for every candidate. Deterministic for a given ``rng`` state;
    calling again with the same ``rng`` continues with fresh worlds."""
    if samples < 1:
        raise ValueError("samples must be >= 1")
    p = state.to_move
    side = p & 1
    reps: dict[int, int] = {}
    for m in state.legal_moves():
        reps.setdefault(move_key(m), m)
    unseen = list(cards_of(ALL_CARDS & ~(state.hands[p] | state.played_mask())))
    others = [s for s in range(state.n) if s != p]
    sizes = [state.hands[s].bit_count() for s in others]
    values: dict[int, list[int]] = {key: [] for key in reps}
    prefix = state.deck[: state.pos]
    for _ in range(samples):
        rng.shuffle(unseen)
        world = state.copy()
        i = 0
        for s, size in zip(others, sizes, strict=True):
            m = 0
            for c in unseen[i : i + size]:
                m |= 1 << c
            world.hands[s] = m
            i += size
        world.deck = prefix + unseen[i:]
        for key, move in reps.items():
            w = world.copy()
            w.play(move)
            values[key].append(playout_value(w, side, solver))
    return values


def pimc_values(state: RoundState, rng: random.Random, samples: int, solver: Solver) -> dict[int, float]:
    """For each legal move, the mover side's mean final half-points (``0..17``) over ``samples`` worlds.

    Two cards of the same rank get the same value. Deterministic for a given ``rng`` state.
    """
    worlds = pimc_world_values(state, rng, samples, solver)
    return {m: sum(worlds[move_key(m)]) / samples for m in state.legal_moves()}
