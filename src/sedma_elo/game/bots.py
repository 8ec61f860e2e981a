"""Bots of graded strength, and playing a whole match between them.

* :class:`RandomBot`: a uniformly random legal move (seeded).
* :class:`GreedyBot`: simple rules of thumb (:func:`greedy_move`): lead a plain low card, take a
  trick that holds points when it can, throw plain low cards otherwise, continue a trick only for points.
* :class:`SamplingBot`: perfect-information Monte Carlo (:func:`~.pimc.pimc_values`) while cards are
  hidden, and perfect play (the exact solver) once a two-player stock is empty.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from .cards import deal_deck
from .config import DEFAULT_GAME_RULES, GameRules
from .greedy import greedy_move
from .pimc import pimc_values
from .record import GameRecord, Move, RoundRecord
from .solver import Solver
from .state import RoundResult, RoundState, next_first_leader, round_stake

__all__ = [
    "Bot",
    "GreedyBot",
    "PlayedMatch",
    "RandomBot",
    "SamplingBot",
    "greedy_move",
    "make_bot",
    "play_match",
]


class Bot(Protocol):
    """Anything that picks a legal move for the player to move."""

    name: str

    def choose(self, state: RoundState) -> int:
        """A legal move of ``state.to_move``."""
        ...


class RandomBot:
    """Plays a uniformly random legal move."""

    def __init__(self, seed: int = 0, name: str = "random") -> None:
        self.name = name
        self.rng = random.Random(seed)

    def choose(self, state: RoundState) -> int:
        """A uniformly random legal move."""
        return self.rng.choice(state.legal_moves())


class GreedyBot:
    """Plays :func:`greedy_move`."""

    def __init__(self, name: str = "greedy") -> None:
        self.name = name

    def choose(self, state: RoundState) -> int:
        """The greedy move."""
        return greedy_move(state)


class SamplingBot:
    """Perfect-information Monte Carlo with ``samples`` worlds per decision; perfect play in a
    two-player endgame. Ties go to the lowest card (and ``stop`` last)."""

    def __init__(
        self, samples: int = 8, seed: int = 0, solver: Solver | None = None, name: str = "sampling"
    ) -> None:
        self.name = name
        self.samples = samples
        self.rng = random.Random(seed)
        self.solver = solver if solver is not None else Solver()

    def choose(self, state: RoundState) -> int:
        """The move with the best estimated (or exact) value for the mover's side."""
        moves = state.legal_moves()
        if len({m >> 2 for m in moves}) == 1:
            return moves[0]
        if state.n == 2 and state.pos >= 32:
            exact = self.solver.move_values(state)
            return max(moves, key=lambda m: exact[m])
        values = pimc_values(state, self.rng, self.samples, self.solver)
        return max(moves, key=lambda m: values[m])


def make_bot(kind: str, seed: int = 0, samples: int = 8, solver: Solver | None = None) -> Bot:
    """A bot by kind name: ``random``, ``greedy`` or ``sampling``. Raises ``ValueError`` otherwise."""
    if kind == "random":
        return RandomBot(seed)
    if kind == "greedy":
        return GreedyBot()
    if kind == "sampling":
        return SamplingBot(samples, seed, solver)
    raise ValueError(f"unknown bot kind {kind!r} (random, greedy, sampling)")


class PlayedMatch:
    """A match played by bots: its record and each round's result."""

    __slots__ = ("match_points", "record", "results", "winner")

    def __init__(self, record: GameRecord, results: list[RoundResult], match_points: tuple[int, int]) -> None:
        self.record = record
        self.results = results
        self.match_points = match_points
        self.winner = 0 if match_points[0] > match_points[1] else 1


def play_match(
    bots: Sequence[Bot],
    players: Sequence[str],
    seed: int,
    rules: GameRules = DEFAULT_GAME_RULES,
    *,
    match_id: str | None = None,
    played_at: str | None = None,
) -> PlayedMatch:
    """Play a whole match, seat ``i`` played by ``bots[i]``; rounds are dealt from ``seed``."""
    if len(bots) != rules.players or len(players) != rules.players:
        raise ValueError(f"need {rules.players} bots and player ids")
    points = [0, 0]
    first = 0
    prev_winner = 0
    rounds: list[RoundRecord] = []
    results: list[RoundResult] = []
    r = 0
    while max(points) < rules.target:
        first = next_first_leader(rules, r, first, prev_winner)
        deck = deal_deck(seed, r)
        state = RoundState(deck, rules.players, first)
        moves = []
        while not state.done:
            p = state.to_move
            move = bots[p].choose(state)
            moves.append(Move(p, move))
            state.play(move)
        res = state.result()
        results.append(res)
        points[res.winner] += round_stake(rules, res)
        prev_winner = res.winner
        rounds.append(RoundRecord(tuple(deck), tuple(moves)))
        r += 1
    record = GameRecord(tuple(players), rules, tuple(rounds), seed, match_id, played_at)
    return PlayedMatch(record, results, (points[0], points[1]))
