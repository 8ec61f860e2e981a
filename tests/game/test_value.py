"""The compiled value search against the plain minimax, the points solver and hand-checked positions."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sedma_elo.game.cards import deal_deck, parse_card
from sedma_elo.game.solver import Solver
from sedma_elo.game.state import RoundState
from sedma_elo.game.value import ValueSolver, move_key, reference_values

from .helpers import scored_endgame

SOLVER = ValueSolver(table_bits=14)
STAKES = (1, 2, 3)


def _late(seed: int, players: int, cards_left: int) -> RoundState:
    """Random play from a seeded deal until at most ``cards_left`` cards are in the hands and stock."""
    rng = random.Random(seed)
    state = RoundState(deal_deck(seed, 0), players, seed % players)
    while not state.done and state.stock_size + sum(h.bit_count() for h in state.hands) > cards_left:
        state.play(rng.choice(state.legal_moves()))
    return state


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.sampled_from([2, 4]),
    stakes=st.sampled_from([(1, 2, 3), (1, 1, 1), (2, 5, 7), (3, 1, 2)]),
)
def test_compiled_search_agrees_with_plain_minimax(
    seed: int, players: int, stakes: tuple[int, int, int]
) -> None:
    """Every move's value equals the exhaustive minimax over the real deal (stock included)."""
    state = _late(seed, players, 10 if players == 2 else 9)
    if state.done:
        return
    got = SOLVER.exact(state, stakes)
    want = reference_values(state, stakes)
    assert {m: got[move_key(m)] for m in want} == want


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_win_or_loss_agrees_with_the_points_solver(seed: int) -> None:
    """All stakes 1: a move wins the round exactly when the points solver gives the mover 9+ half-points."""
    rng = random.Random(seed)
    state = RoundState(deal_deck(seed, 0), 2, seed % 2)
    while state.stock_size > 0 or rng.random() < 0.3:
        state.play(rng.choice(state.legal_moves()))
    if state.done:
        return
    half = Solver().move_values(state)
    got = SOLVER.exact(state, (1, 1, 1))
    assert {m: got[move_key(m)] for m in half} == {m: 1 if v >= 9 else -1 for m, v in half.items()}


def test_a_seven_led_at_4_4_loses_where_a_jack_or_queen_wins() -> None:
    """4:4, seat 0 holds Jh Qs 7c, seat 1 8s 8d Qd: without the seven, Qd takes the queen and the last."""
    state = scored_endgame([["Jh", "Qs", "7c"], ["8s", "8d", "Qd"]], ["Ac", "Ad", "Tc", "Td"])
    assert SOLVER.exact(state, STAKES) == {0: -1, 4: 1, 5: 1}  # rank 0 seven, 4 jack, 5 queen


def test_stopping_where_a_queen_retakes_the_last_trick_loses() -> None:
    """4:4, seat 1 led Qc, seat 0 took it with 7h: continuing with Qd wins the last trick, stopping loses."""
    state = scored_endgame([["7h", "8s"], ["Qc", "Qd"]], ["Ac", "Ad", "Tc", "Td"], leader=1)
    state.play(parse_card("Qc"))
    state.play(parse_card("7h"))
    assert state.deciding and state.to_move == 1
    assert SOLVER.exact(state, STAKES) == {5: 1, -1: -1}


def test_leading_a_seven_gives_away_a_24er_at_no_point_cost() -> None:
    """Side 0 took every trick: seat 1 (9s 8s 8d Ks, no seven) can take only by matching the 9 or the king,
    and seat 0 needs both sevens to retake; leading one wastes it. Points and last trick: the same."""
    state = scored_endgame(
        [["Kh", "7c", "9c", "7s"], ["9s", "8s", "8d", "Ks"]],
        ["Ac", "Ad", "Ah", "As", "Tc", "Td", "Th", "Ts"],
        tricks=(5, 0),
    )
    assert SOLVER.exact(state, STAKES) == {0: 2, 2: 3, 6: 3}  # seven: 16er; nine or king: 24er
    assert set(Solver().move_values(state).values()) == {17}


def test_sampled_deals_of_a_stock_empty_two_player_round_are_the_exact_values() -> None:
    """With the stock empty the unseen cards are the opponent's hand: every deal gives the exact values."""
    state = _late(5, 2, 8)
    assert state.stock_size == 0 and not state.done
    exact = SOLVER.exact(state, STAKES)
    table = SOLVER.sampled(state, STAKES, seed=11, first=0, count=5)
    for row in table:
        assert dict(zip(ValueSolver.candidates(state), row.tolist(), strict=True)) == exact


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**63), first=st.integers(0, 50))
def test_a_deal_depends_only_on_the_seed_and_its_index(seed: int, first: int) -> None:
    """Deal k is the same whether solved alone or in a batch starting anywhere before it."""
    state = _late(seed % 1000, 2, 12)
    if state.done:
        return
    batch = SOLVER.sampled(state, STAKES, seed, 0, first + 2)
    alone = SOLVER.sampled(state, STAKES, seed, first + 1, 1)
    assert batch[first + 1].tolist() == alone[0].tolist()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.sampled_from([2, 4]))
def test_deal_classes_cover_every_card_deal_once(seed: int, players: int) -> None:
    """Weights sum to the number of card deals (hands as sets, stock in order); rows hold the unseen ranks."""
    from math import factorial, prod

    from sedma_elo.game.cards import ALL_CARDS, cards_of
    from sedma_elo.game.value import deal_classes

    state = _late(seed, players, 7 if players == 2 else 10)
    if state.done:
        return
    p = state.to_move
    unseen = sorted(c >> 2 for c in cards_of(ALL_CARDS & ~(state.hands[p] | state.played_mask())))
    sizes = [state.hands[s].bit_count() for s in range(players) if s != p]
    listed = deal_classes(state, 100_000)
    assert listed is not None
    deals, weights = listed
    assert round(float(weights.sum())) == factorial(len(unseen)) // prod(factorial(k) for k in sizes)
    assert all(sorted(int(c) >> 2 for c in row) == unseen for row in deals)
    assert len({tuple(row) for row in deals.tolist()}) == len(deals)
