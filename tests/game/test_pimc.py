"""Perfect-information Monte Carlo: deterministic, blind to hidden cards, bounded values."""

from __future__ import annotations

import random

import pytest

from sedma_elo.game.cards import ALL_CARDS, cards_of, deal_deck
from sedma_elo.game.pimc import pimc_values
from sedma_elo.game.solver import Solver
from sedma_elo.game.state import RoundState


def _midgame(seed: int, moves: int = 5) -> RoundState:
    rng = random.Random(seed)
    state = RoundState(deal_deck(seed, 0), 2, 0)
    for _ in range(moves):
        state.play(rng.choice(state.legal_moves()))
    return state


def test_same_seed_same_values() -> None:
    """Two runs with equally seeded generators give identical estimates."""
    state = _midgame(4)
    a = pimc_values(state, random.Random(9), 12, Solver())
    b = pimc_values(state, random.Random(9), 12, Solver())
    assert a == b and set(a) == set(state.legal_moves())


def test_values_do_not_depend_on_the_hidden_cards() -> None:
    """Re-dealing the unseen cards (opponent hand and stock) changes nothing for the mover."""
    state = _midgame(6)
    p = state.to_move
    unseen = list(cards_of(ALL_CARDS & ~(state.hands[p] | state.played_mask())))
    other = state.copy()
    random.Random(1).shuffle(unseen)
    size = other.hands[1 - p].bit_count()
    other.hands[1 - p] = sum(1 << c for c in unseen[:size])
    other.deck = state.deck[: state.pos] + unseen[size:]
    assert pimc_values(state, random.Random(2), 10, Solver()) == pimc_values(
        other, random.Random(2), 10, Solver()
    )


def test_values_are_half_points_within_the_round_total() -> None:
    """Every estimate lies in [0, 17] half-points."""
    for seed in range(10):
        state = _midgame(seed, seed % 7)
        values = pimc_values(state, random.Random(seed), 6, Solver())
        assert all(0 <= v <= 17 for v in values.values())


def test_four_player_rounds_are_estimated_by_playouts() -> None:
    """Four players: estimates exist for every legal move, within bounds."""
    state = RoundState(deal_deck(3, 0), 4, 0)
    values = pimc_values(state, random.Random(0), 5, Solver())
    assert set(values) == set(state.legal_moves()) and all(0 <= v <= 17 for v in values.values())


def test_zero_samples_are_refused() -> None:
    """At least one world is needed."""
    with pytest.raises(ValueError):
        pimc_values(_midgame(1), random.Random(0), 0, Solver())
