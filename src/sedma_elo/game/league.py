"""A league of bots: many seeded matches, rated input written as the project's match history.

The roster has bots of four strengths, two of each: ``random``, ``mixed`` (greedy, but a random move
half of the time), ``greedy`` and ``sampling`` (perfect-information Monte Carlo with few worlds and
greedy playouts: its own model, not the judge's, which solves every deal exactly and values the
round by its stake). The sampling bot is about a hundred times slower than the others, so only
``sampling_share`` of the matches (default 2%) involve it; the others seat distinct non-sampling
bots uniformly. Four-player leagues (``rules.players == 4``) seat four distinct bots, seats 0 and
2 against 1 and 3, and are written as JSON Lines (the CSV holds one player a side).

Bad moves are counted by :func:`~.analysis.analyze`: by default only in exact positions (two
players, stock empty; ``bad_moves="endgame"``), which costs little; ``"full"`` also judges the
hidden-card phase by sampling, ``"none"`` counts none. :func:`bad_moves_by_bot` sums them per bot.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Literal

from ..batch.history import COLUMNS, write_matches
from ..core.model import Match
from .analysis import AnalysisConfig, Judge, analyze
from .bots import Bot, GreedyBot, RandomBot, SamplingBot, play_match
from .config import DEFAULT_GAME_RULES, GameRules
from .greedy import greedy_move
from .solver import Solver
from .state import RoundState
from .value import ValueSolver

__all__ = [
    "CSV_COLUMNS",
    "ROSTER",
    "BadMoveMode",
    "BotTally",
    "LeagueConfig",
    "MixedBot",
    "bad_moves_by_bot",
    "run_league",
    "write_history_csv",
]

BadMoveMode = Literal["none", "endgame", "full"]
_JUDGE: dict[BadMoveMode, Judge] = {"none": "none", "endgame": "exact", "full": "all"}

#: The project's match-history CSV columns (``docs/replay.md``).
CSV_COLUMNS = COLUMNS

#: Player id and bot kind of every league member.
ROSTER: tuple[tuple[str, str], ...] = (
    ("bot-random-1", "random"),
    ("bot-random-2", "random"),
    ("bot-mixed-1", "mixed"),
    ("bot-mixed-2", "mixed"),
    ("bot-greedy-1", "greedy"),
    ("bot-greedy-2", "greedy"),
    ("bot-sampling-1", "sampling"),
    ("bot-sampling-2", "sampling"),
)


class MixedBot:
    """Greedy, except that with probability ``noise`` it plays a uniformly random legal move."""

    def __init__(self, noise: float = 0.5, seed: int = 0, name: str = "mixed") -> None:
        self.name = name
        self.noise = noise
        self.rng = random.Random(seed)

    def choose(self, state: RoundState) -> int:
        """The greedy move, or a random one with probability ``noise``."""
        if self.rng.random() < self.noise:
            return self.rng.choice(state.legal_moves())
        return greedy_move(state)


@dataclass(frozen=True, slots=True)
class LeagueConfig:
    """What a league plays.

    Attributes:
        matches: number of matches.
        seed: master seed: the whole league (deals, pairings, bots' choices) follows from it.
        rules: the game rules of every match (two or four players).
        sampling_share: fraction of matches that involve a sampling bot (``0..1``).
        sampling_samples: worlds per decision of the sampling bot.
        bad_moves: ``none``, ``endgame`` (exact positions only) or ``full`` (also sampled positions).
        start: the date of the first match; ``per_day`` matches are dated each day.
    """

    matches: int = 1000
    seed: int = 0
    rules: GameRules = DEFAULT_GAME_RULES
    sampling_share: float = 0.02
    sampling_samples: int = 4
    bad_moves: BadMoveMode = "endgame"
    start: date = date(2025, 1, 1)
    per_day: int = 100

    def __post_init__(self) -> None:
        if self.matches < 0:
            raise ValueError("matches must be >= 0")
        if not 0.0 <= self.sampling_share <= 1.0:
            raise ValueError("sampling_share must be within [0, 1]")
        if self.per_day < 1:
            raise ValueError("per_day must be >= 1")
        if self.bad_moves not in ("none", "endgame", "full"):
            raise ValueError("bad_moves must be none, endgame or full")


def _bot(kind: str, seed: int, samples: int, solver: Solver) -> Bot:
    if kind == "random":
        return RandomBot(seed)
    if kind == "mixed":
        return MixedBot(0.5, seed)
    if kind == "greedy":
        return GreedyBot()
    return SamplingBot(samples, seed, solver)


Entry = tuple[str, str]


def _seats(rng: random.Random, config: LeagueConfig, fast: list[Entry], slow: list[Entry]) -> list[Entry]:
    """The bots of one match by seat: one sampling bot in ``sampling_share`` of the matches."""
    if config.rules.players == 2:
        # The two-player draw keeps its order of random numbers, so seeded leagues stay as they were.
        if rng.random() < config.sampling_share:
            a = rng.choice(slow)
            b = rng.choice([e for e in ROSTER if e != a])
        else:
            a, b = rng.sample(fast, 2)
        return [b, a] if rng.random() < 0.5 else [a, b]
    if rng.random() < config.sampling_share:
        first = rng.choice(slow)
        seats = [first, *rng.sample([e for e in ROSTER if e != first], 3)]
    else:
        seats = rng.sample(fast, 4)
    rng.shuffle(seats)
    return seats


def run_league(config: LeagueConfig, progress: Callable[[int], None] | None = None) -> Iterator[Match]:
    """Play the league, yielding each finished match as a rating input, oldest first."""
    rng = random.Random(config.seed)
    solver = Solver()
    fast = [entry for entry in ROSTER if entry[1] != "sampling"]
    slow = [entry for entry in ROSTER if entry[1] == "sampling"]
    analysis = AnalysisConfig(judge=_JUDGE[config.bad_moves], seed=config.seed)
    values = ValueSolver()
    for i in range(config.matches):
        seats = _seats(rng, config, fast, slow)
        match_seed = rng.getrandbits(63)
        bots = [
            _bot(kind, match_seed ^ (s + 1), config.sampling_samples, solver)
            for s, (_p, kind) in enumerate(seats)
        ]
        match_id = f"league-{config.seed}-{i + 1:06d}"
        day = (config.start + timedelta(days=i // config.per_day)).isoformat()
        ids = [pid for pid, _kind in seats]
        played = play_match(bots, ids, match_seed, config.rules, match_id=match_id, played_at=day)
        yield analyze(played.record, analysis, solver, values=values).to_match()
        if progress is not None:
            progress(i + 1)


@dataclass(slots=True)
class BotTally:
    """One bot's league record: matches played, matches won and bad moves made."""

    matches: int = 0
    wins: int = 0
    bad_moves: int = 0

    @property
    def bad_per_match(self) -> float:
        """Bad moves per match played (0 when none was played)."""
        return self.bad_moves / self.matches if self.matches else 0.0


def bad_moves_by_bot(matches: Iterable[Match]) -> dict[str, BotTally]:
    """Matches, wins and bad moves of every player id in ``matches``, ids sorted."""
    out: dict[str, BotTally] = {}
    for m in matches:
        for side, team in (("a", m.team_a), ("b", m.team_b)):
            for pid in team:
                tally = out.setdefault(pid, BotTally())
                tally.matches += 1
                tally.wins += m.winner == side
                tally.bad_moves += m.stats_of(pid).bad_moves
    return dict(sorted(out.items()))


def write_history_csv(path: str | Path, matches: Iterable[Match]) -> int:
    """Write ``matches`` as the project's match history: CSV, or JSON Lines for a ``.jsonl`` name
    (needed for four-player matches); gzipped when the name ends in ``.gz``.

    Delegates to :func:`sedma_elo.batch.history.write_matches`: everything is checked first and the file
    is replaced atomically, so a failure never leaves a half-written history behind. Returns the
    number of rows written.
    """
    items = list(matches)
    write_matches(path, items)
    return len(items)
