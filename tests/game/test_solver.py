"""The exact endgame solver against a plain minimax and positions worked out by hand."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedma_elo.game.cards import deal_deck, parse_card
from sedma_elo.game.solver import Solver
from sedma_elo.game.state import RoundState

from .helpers import endgame_state, plain_minimax


def _random_endgame(deal_seed: int, play_seed: int, extra: int) -> RoundState:
    """Random play until the stock is empty, then ``extra`` more random moves (mid-trick positions too)."""
    rng = random.Random(play_seed)
    state = RoundState(deal_deck(deal_seed, 0), 2, deal_seed % 2)
    while state.pos < 32:
        state.play(rng.choice(state.legal_moves()))
    for _ in range(extra):
        if state.done:
            break
        state.play(rng.choice(state.legal_moves()))
    return state


def test_hand_worked_position_leading_the_ace_wins_everything() -> None:
    """Ac 7c against Ad 8h, seat 0 to lead: leading Ac takes both aces and the last trick (5 half-points);
    leading 7c lets 8h through and loses all."""
    state = endgame_state([["Ac", "7c"], ["Ad", "8h"]])
    solver = Solver()
    assert solver.solve(state) == 5
    assert solver.move_values(state) == {parse_card("7c"): 0, parse_card("Ac"): 5}


def test_last_card_each_goes_to_the_matching_answer() -> None:
    """Kc against Kd with one card each: seat 1 takes the last trick, seat 0 gets nothing."""
    assert Solver().solve(endgame_state([["Kc"], ["Kd"]])) == 0


def test_solver_refuses_positions_with_a_stock() -> None:
    """Hidden stock cards: not a perfect-information position."""
    with pytest.raises(ValueError):
        Solver().solve(RoundState(deal_deck(1, 0), 2, 0))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 7))
def test_solver_agrees_with_plain_minimax(deal_seed: int, play_seed: int, extra: int) -> None:
    """Alpha-beta with the table and rank merging gives the exact minimax value, card by card."""
    state = _random_endgame(deal_seed, play_seed, extra)
    assert Solver().solve(state) == plain_minimax(state)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 5))
def test_move_values_agree_with_plain_minimax_children(deal_seed: int, play_seed: int, extra: int) -> None:
    """Each move's value is the mover side's final half-points under perfect play."""
    state = _random_endgame(deal_seed, play_seed, extra)
    if state.done:
        return
    side = state.to_move % 2
    values = Solver().move_values(state)
    for move, value in values.items():
        child = state.copy()
        child.play(move)
        v0 = 2 * child.points(0) + plain_minimax(child)
        if child.done:
            v0 += 1 if child.last_winner % 2 == 0 else 0
        assert value == (v0 if side == 0 else 17 - v0)


def test_one_solver_reused_gives_the_same_values_as_fresh_ones() -> None:
    """The transposition table carries over between positions without changing any value."""
    shared = Solver()
    for seed in range(40):
        state = _random_endgame(seed, seed + 1, seed % 4)
        assert shared.solve(state) == Solver().solve(state)


def test_pack_hand_counts_each_rank() -> None:
    """Two sevens, one ten and three aces pack to 2, 1 and 3 in their 3-bit fields."""
    from sedma_elo.game.cards import mask_of
    from sedma_elo.game.solver import pack_hand

    hand = mask_of(parse_card(c) for c in ("7c", "7h", "Td", "Ac", "Ah", "As"))
    assert pack_hand(hand) == 2 | (1 << 9) | (3 << 21)
