"""The round result on random complete rounds: the winner by points, a 4:4 by the last trick, either side."""

from __future__ import annotations

import random

import pytest

from sedma_elo.game.cards import N_CARDS
from sedma_elo.game.state import RoundResult, RoundState


def _random_round(seed: int, players: int) -> RoundResult:
    """A round dealt from a shuffled deck and played with random legal moves (stops included)."""
    rng = random.Random(seed)
    deck = list(range(N_CARDS))
    rng.shuffle(deck)
    state = RoundState(deck, players, first_leader=rng.randrange(players))
    while not state.done:
        state.play(rng.choice(state.legal_moves()))
    return state.result()


def _rounds(players: int, n: int = 400) -> list[RoundResult]:
    return [_random_round(seed, players) for seed in range(n)]


@pytest.mark.parametrize("players", [2, 4])
def test_the_side_with_more_points_wins_and_a_4_4_goes_to_the_last_trick(players: int) -> None:
    """In every random round the winner has more points, or on 4:4 took the last trick (docs/game.md)."""
    for r in _rounds(players):
        pa, pb = r.points
        assert pa + pb == 8
        expected = 0 if pa > pb else 1 if pb > pa else r.last_trick_side
        assert r.winner == expected, r


@pytest.mark.parametrize("players", [2, 4])
def test_4_4_rounds_are_won_by_either_side_through_the_last_trick(players: int) -> None:
    """Random rounds include 4:4 rounds whose last trick went to side 0 and to side 1; each is 4_and_last."""
    ties = [r for r in _rounds(players) if r.points == (4, 4)]
    assert {r.last_trick_side for r in ties} == {0, 1}
    for r in ties:
        assert r.winner == r.last_trick_side
        assert r.kind == "4_and_last"


@pytest.mark.parametrize("players", [2, 4])
def test_tricks_count_the_tricks_each_side_took(players: int) -> None:
    """result().tricks equals the tricks seen ending for each side while the round was played."""
    for seed in range(100):
        rng = random.Random(seed)
        deck = list(range(N_CARDS))
        rng.shuffle(deck)
        state = RoundState(deck, players, first_leader=rng.randrange(players))
        seen = [0, 0]
        while not state.done:
            state.play(rng.choice(state.legal_moves()))
            if state.led == -1:  # a trick just ended; its winner leads the next one
                seen[state.leader & 1] += 1
        assert state.result().tricks == (seen[0], seen[1])


def test_result_of_a_round_in_play_is_refused() -> None:
    """result() before the last trick raises ValueError saying the round is not over."""
    state = RoundState(list(range(N_CARDS)), 2, first_leader=0)
    with pytest.raises(ValueError, match=r"^the round is not over$"):
        state.result()
