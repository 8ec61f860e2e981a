"""Per-match statistics from a game record: rounds won by kind, and the bad moves.

A move is judged only where the player had a real choice (two or more ranks, or continue/stop).

* **Exact** (two players, stock empty): both hands are known, so the solver gives every move's
  value under perfect play. A move is bad when it gives away at least ``exact_threshold`` points
  (default 1) against the best move.
* **Sampled** (cards still hidden): :func:`~.pimc.pimc_values` estimates every move's value over
  ``samples`` random deals of the unseen cards. A move is bad when its expected loss against the
  best move is more than ``sampled_threshold`` points (default 1).

Values count each ace and ten as one point and the last trick as half a point (it only breaks a 4:4
tie), from the move to the end of the round.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from ..core.model import Match, PlayerStats
from .cards import cards_of, format_card
from .pimc import move_key, pimc_world_values
from .record import GameRecord, Replay, iter_positions, replay
from .solver import Solver
from .state import STOP, RoundState, format_move

Judge = Literal["all", "exact", "none"]

__all__ = ["AnalysisConfig", "BadMove", "Judge", "MatchAnalysis", "PlayerReport", "analyze"]


@dataclass(frozen=True, slots=True)
class AnalysisConfig:
    """How bad moves are found (see the module docstring).

    Attributes:
        exact_threshold: points a move must lose against perfect play to be bad (exact positions).
        sampled_threshold: expected points a move must lose, strictly more than this, to be bad.
        samples: random deals per judged move while cards are hidden (cost grows linearly).
        max_samples: the most deals for a move whose loss is within two standard errors of the
            threshold (borderline verdicts get up to this many; ``samples`` disables it).
        seed: seed of the sampling; the same record, config and seed give the same result.
        judge: which moves are judged: ``all``, ``exact`` (exact positions only) or ``none``.
    """

    exact_threshold: float = 1.0
    sampled_threshold: float = 1.0
    samples: int = 32
    max_samples: int = 128
    seed: int = 0
    judge: Judge = "all"

    def __post_init__(self) -> None:
        if not self.exact_threshold > 0 or not self.sampled_threshold > 0:
            raise ValueError("thresholds must be > 0 points")
        if not 1 <= self.samples <= 10_000:
            raise ValueError("samples must be in [1, 10000]")
        if not self.samples <= self.max_samples <= 100_000:
            raise ValueError("max_samples must be in [samples, 100000]")
        if self.judge not in ("all", "exact", "none"):
            raise ValueError("judge must be all, exact or none")


@dataclass(frozen=True, slots=True)
class BadMove:
    """One bad move. ``round`` and ``move`` are 1-based; points are match-round points (ace/ten = 1).

    ``hand`` is the player's hand before the move, ``trick`` the cards already in the trick in order,
    ``stock`` the cards left in the stock; ``method`` is ``exact`` or ``sampled``.
    """

    round: int
    move: int
    player: str
    hand: tuple[str, ...]
    trick: tuple[str, ...]
    stock: int
    played: str
    best: str
    loss: float
    method: Literal["exact", "sampled"]

    def position(self) -> str:
        """A one-line description of the position."""
        trick = " ".join(self.trick) if self.trick else "(leading)"
        return f"hand {' '.join(self.hand)}; trick {trick}; stock {self.stock}"


@dataclass(slots=True)
class PlayerReport:
    """One player's statistics in a match (round counts are those of the player's side)."""

    player: str
    side: int
    rounds_won: int = 0
    won_by_16: int = 0
    won_by_24: int = 0
    won_by_4_and_last: int = 0
    bad_moves: list[BadMove] = field(default_factory=list)

    def stats(self) -> PlayerStats:
        """The four counts the rating takes."""
        return PlayerStats(len(self.bad_moves), self.won_by_16, self.won_by_24, self.won_by_4_and_last)


@dataclass(frozen=True, slots=True)
class MatchAnalysis:
    """Everything derived from one valid record."""

    record: GameRecord
    replay: Replay
    players: tuple[PlayerReport, ...]
    judged_moves: int

    @property
    def winner(self) -> Literal["a", "b"]:
        """The match winner's side: ``a`` (seat 0's side) or ``b``."""
        return "a" if self.replay.winner == 0 else "b"

    def to_match(self) -> Match:
        """The rating input (:class:`~sedma_elo.core.model.Match`)."""
        rec = self.record
        team_a = tuple(p.player for p in self.players if p.side == 0)
        team_b = tuple(p.player for p in self.players if p.side == 1)
        played = datetime.fromisoformat(rec.played_at) if rec.played_at else None
        stats = {p.player: p.stats() for p in self.players}
        return Match(team_a, team_b, self.winner, stats, rec.match_id, played)

    def to_json(self) -> dict[str, object]:
        """The service's match body: ``match_id, played_at, player_a, player_b, winner, stats.{a,b}``.

        A four-player match gives ``team_a``/``team_b`` lists and ``stats`` keyed by player id.
        """
        rec = self.record
        out: dict[str, object] = {"match_id": rec.match_id, "played_at": rec.played_at}
        if len(self.players) == 2:
            out["player_a"], out["player_b"] = rec.players[0], rec.players[1]
            out["winner"] = self.winner
            out["stats"] = {"ab"[p.side]: p.stats().to_dict() for p in self.players}
        else:
            out["team_a"] = [p.player for p in self.players if p.side == 0]
            out["team_b"] = [p.player for p in self.players if p.side == 1]
            out["winner"] = self.winner
            out["stats"] = {p.player: p.stats().to_dict() for p in self.players}
        return out


def _sampled_values(
    state: RoundState, played: int, config: AnalysisConfig, solver: Solver, seed: str
) -> dict[int, float]:
    """Mean values in points by sampling, with more worlds while the verdict is within noise.

    Starts with ``config.samples`` worlds; while the played move is not the best and its mean loss
    is within two standard errors of the threshold, adds as many worlds again, up to
    ``config.max_samples``.
    """
    # One generator per judged move, seeded by its place in the record: a move's verdict does not
    # depend on which other moves were judged before it.
    rng = random.Random(seed)
    worlds = pimc_world_values(state, rng, config.samples, solver)
    played_key = move_key(played)
    while True:
        n = len(worlds[played_key])
        means = {key: sum(v) / n for key, v in worlds.items()}
        best_key = max(means, key=lambda k: means[k])
        if best_key == played_key or n >= config.max_samples:
            break
        diffs = [b - p for b, p in zip(worlds[best_key], worlds[played_key], strict=True)]
        loss = statistics.fmean(diffs) / 2
        se = statistics.stdev(diffs) / math.sqrt(n) / 2 if n > 1 else math.inf
        if abs(loss - config.sampled_threshold) > 2 * se:
            break
        more = pimc_world_values(state, rng, min(config.samples, config.max_samples - n), solver)
        for key, vals in more.items():
            worlds[key].extend(vals)
    return {m: means[move_key(m)] / 2 for m in state.legal_moves()}


def _judge(
    state: RoundState, played: int, config: AnalysisConfig, solver: Solver, seed: str
) -> tuple[dict[int, float], Literal["exact", "sampled"]] | None:
    """Move values in points for the mover's side, or ``None`` when the move is not judged."""
    if config.judge == "none":
        return None
    moves = state.legal_moves()
    if len({move_key(m) for m in moves}) < 2:
        return None
    if state.n == 2 and state.pos >= 32:
        exact = solver.move_values(state)
        return {m: v / 2 for m, v in exact.items()}, "exact"
    if config.judge != "all":
        return None
    return _sampled_values(state, played, config, solver, seed), "sampled"


def analyze(
    record: GameRecord,
    config: AnalysisConfig | None = None,
    solver: Solver | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> MatchAnalysis:
    """Validate ``record`` by replaying it, then derive each player's statistics and bad moves.

    Raises :class:`~sedma_elo.errors.GameRecordError` (before anything is judged) when the record is
    invalid. ``progress(done, total)`` is called after each round.
    """
    config = config or AnalysisConfig()
    solver = solver or Solver()
    rep = replay(record)
    rules = record.rules
    reports = tuple(PlayerReport(pid, seat % 2) for seat, pid in enumerate(record.players))
    for res in rep.results:
        for rp in reports:
            if rp.side != res.winner:
                continue
            rp.rounds_won += 1
            rp.won_by_16 += res.counts_as_16(rules)
            rp.won_by_24 += res.kind == "24"
            rp.won_by_4_and_last += res.kind == "4_and_last"
    judged = 0
    trick_order: list[int] = []
    current_round = 0
    for r, i, state, mv in iter_positions(record):
        if r != current_round and progress is not None:
            progress(current_round + 1, len(record.rounds))
        current_round = r
        if state.led < 0:
            trick_order = []
        judgement = _judge(state, mv.move, config, solver, f"{config.seed}:{r}:{i}")
        if judgement is not None:
            judged += 1
            values, method = judgement
            best = max(values, key=lambda m: values[m])
            loss = values[best] - values[mv.move]
            bad = loss >= config.exact_threshold if method == "exact" else loss > config.sampled_threshold
            if bad:
                reports[mv.player].bad_moves.append(
                    BadMove(
                        round=r + 1,
                        move=i + 1,
                        player=record.players[mv.player],
                        hand=tuple(format_card(c) for c in cards_of(state.hands[mv.player])),
                        trick=tuple(format_card(c) for c in trick_order),
                        stock=state.stock_size,
                        played=format_move(mv.move),
                        best=format_move(best),
                        loss=round(loss, 3),
                        method=method,
                    )
                )
        if mv.move != STOP:
            trick_order.append(mv.move)
    if progress is not None:
        progress(len(record.rounds), len(record.rounds))
    return MatchAnalysis(record, rep, reports, judged)
