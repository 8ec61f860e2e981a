"""A simulated league with hidden true skills, to measure what a rule set does to ratings.

Generative model (all randomness from one ``numpy`` generator with a fixed seed):

* Skills: player ``i`` has a hidden skill ``theta_i ~ Normal(0, skill_sd)`` in Elo points.
  ``founders`` players are there from the start; the others join at evenly spaced points of the
  schedule (they are the "new players" whose convergence is measured).
* Pairing: each match takes two distinct players uniformly among those who have joined.
* A match is a race to ``rounds_to_win`` rounds. Side a wins a round with probability
  ``q = 1 / (1 + 10^((theta_b - theta_a) / round_scale))``.
* How a round is won depends on how lopsided it was: with ``d = q`` for the round's winner
  (the chance they had), the round is a 24er with probability ``p24 * d``, else a 16er with
  probability ``p16 * d``, else "4 and last" with probability ``p4 * (1 - d)``.
* Bad moves: each player makes ``Poisson(bad_rate * exp(-theta / 400))`` per match, so weaker
  players make more.

The matches are rated with the engine (:func:`sedma_elo.core.engine.rate`) through the same
forecaster the backtest uses, so the rule set under test is exactly the one the service runs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.model import Match, PlayerStats, Winner
from ..core.rules import REFERENCE_RULES, Rules
from ..errors import ValidationError
from .fairness import losing_well_gain, newcomer_convergence
from .metrics import Split
from .sedma import sedma_rules
from .table import table_from_matches

__all__ = [
    "League",
    "LeagueResult",
    "losing_well_gain",
    "simulate_league",
    "spearman",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class League:
    """Parameters of the generative model (see the module docstring), checked by :func:`simulate_league`."""

    players: int = 200
    founders: int = 150
    matches: int = 20_000
    skill_sd: float = 200.0
    rounds_to_win: int = 3
    round_scale: float = 800.0
    p24: float = 0.10
    p16: float = 0.35
    p4: float = 0.30
    bad_rate: float = 1.0
    seed: int = 7


@dataclass(frozen=True, slots=True)
class LeagueResult:
    """What a rule set did to a simulated league.

    Attributes:
        rules: the rule set's label.
        spearman: rank correlation of the final ratings with the hidden skills (1 is perfect).
        points_per_100k: rating points created (+) or destroyed (-) per 100,000 matches, summed over
            all players (0 for a zero-sum system).
        mean_drift_per_100k: change of the league's mean rating per 100,000 matches.
        convergence_median, convergence_p90: matches a newcomer needs until their rating is first
            within ``tolerance`` points of their settled rating (mean of their last third of
            matches); newcomers who never get there count as their number of matches.
        newcomers: how many newcomers the figures are over.
        tolerance: the ``tolerance`` used, in rating points.
        losing_well: rating gain of a loss with every bonus at its cap over a plain loss, between
            equal players at the initial rating.
        win_gain: the gain of a plain win in the same situation (for scale).
    """

    rules: str
    spearman: float
    points_per_100k: float
    mean_drift_per_100k: float
    convergence_median: float
    convergence_p90: float
    newcomers: int
    tolerance: float
    losing_well: int
    win_gain: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return asdict(self)


def _check(league: League) -> None:
    if league.players < 2:
        raise ValidationError("players", f"must be at least 2, got {league.players}")
    if not 2 <= league.founders <= league.players:
        raise ValidationError("founders", f"must be in [2, players], got {league.founders}")
    if league.matches < 1:
        raise ValidationError("matches", f"must be at least 1, got {league.matches}")
    for name in ("skill_sd", "round_scale"):
        if not getattr(league, name) > 0:
            raise ValidationError(name, "must be > 0")
    for name in ("p24", "p16", "p4"):
        if not 0.0 <= getattr(league, name) <= 1.0:
            raise ValidationError(name, "must be a probability in [0, 1]")
    if league.rounds_to_win < 1:
        raise ValidationError("rounds_to_win", "must be at least 1")
    if league.bad_rate < 0:
        raise ValidationError("bad_rate", "must be >= 0")


def generate_matches(league: League) -> tuple[list[Match], FloatArray]:
    """The league's matches (in order) and the hidden skill of each player ``p0, p1, ...``.

    Raises:
        ValidationError: a parameter out of range (the field is named).
    """
    _check(league)
    rng = np.random.default_rng(league.seed)
    skill = rng.normal(0.0, league.skill_sd, league.players)
    joins = np.zeros(league.players, dtype=np.int64)
    late = league.players - league.founders
    if late:
        joins[league.founders :] = np.linspace(0, league.matches * 0.6, late + 2)[1:-1].astype(np.int64)
    start = datetime(2024, 1, 1)
    matches = []
    for i in range(league.matches):
        active = int(np.searchsorted(np.sort(joins), i, side="right"))
        a, b = (int(x) for x in rng.choice(active, 2, replace=False))
        q = 1.0 / (1.0 + 10.0 ** ((skill[b] - skill[a]) / league.round_scale))
        wins = [0, 0]
        counts = [[0, 0, 0], [0, 0, 0]]  # won_by_16, won_by_24, won_by_4_and_last per side
        while max(wins) < league.rounds_to_win:
            side = 0 if rng.random() < q else 1
            d = q if side == 0 else 1.0 - q
            wins[side] += 1
            u = rng.random()
            if u < league.p24 * d:
                counts[side][1] += 1
            elif u < league.p24 * d + league.p16 * d:
                counts[side][0] += 1
            elif rng.random() < league.p4 * (1.0 - d):
                counts[side][2] += 1
        bad = [int(rng.poisson(league.bad_rate * math.exp(-skill[x] / 400.0))) for x in (a, b)]
        stats = [PlayerStats(bad[s], counts[s][0], counts[s][1], counts[s][2]) for s in (0, 1)]
        winner: Winner = "a" if wins[0] > wins[1] else "b"
        matches.append(
            Match.single(
                f"p{a}",
                f"p{b}",
                winner,
                stats[0],
                stats[1],
                match_id=f"s{i}",
                played_at=start + timedelta(minutes=i),
            )
        )
    # Player ids are assigned by index, so p<i> has skill[i] whether or not it ever played.
    return matches, skill


def _rank(x: FloatArray) -> FloatArray:
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    ranks[order] = np.arange(x.size, dtype=np.float64)
    # average the ranks of ties
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return np.asarray(sums[inverse] / counts[inverse], dtype=np.float64)


def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman rank correlation (ties get their average rank); ``nan`` if either is constant."""
    rx, ry = _rank(np.asarray(x, dtype=np.float64)), _rank(np.asarray(y, dtype=np.float64))
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def simulate_league(
    league: League, rules: Rules = REFERENCE_RULES, *, tolerance: float = 50.0
) -> LeagueResult:
    """Play ``league`` under ``rules`` and measure ranking quality, inflation, convergence, "losing well".

    Raises:
        ValidationError: a league parameter out of range.
    """
    matches, skill = generate_matches(league)
    table = table_from_matches(matches)
    split = Split(len(table), len(table) - 1, len(table) - 1)
    fc = sedma_rules(rules)(table, split)
    assert fc.rating_a is not None and fc.rating_b is not None and fc.final is not None
    ids = [int(pid[1:]) for pid in table.players]
    true_skill = skill[ids]
    n = len(table)
    initial = float(rules.initial_rating)
    created = float(fc.final.sum() - initial * table.n_players)
    # Mean rating of the league at the end vs. the mean of the first-seen ratings (all initial).
    mean_drift = float(fc.final.mean() - initial)
    # pre-match rating sequence of each player, in match order (side a and b interleaved by time)
    who = np.empty(2 * n, dtype=np.int64)
    val = np.empty(2 * n)
    who[0::2], who[1::2] = table.a, table.b
    val[0::2], val[1::2] = fc.rating_a, fc.rating_b
    newcomers = [
        table.players.index(f"p{i}")
        for i in range(league.founders, league.players)
        if f"p{i}" in table.players
    ]
    steps = newcomer_convergence(who, val, newcomers, tolerance)
    count = len(steps)
    good, win = losing_well_gain(rules)
    return LeagueResult(
        rules=rules.label,
        spearman=spearman(fc.final, true_skill),
        points_per_100k=created / n * 100_000,
        mean_drift_per_100k=mean_drift / n * 100_000,
        convergence_median=float(np.median(steps)) if steps else float("nan"),
        convergence_p90=float(np.percentile(steps, 90)) if steps else float("nan"),
        newcomers=count,
        tolerance=tolerance,
        losing_well=good,
        win_gain=win,
    )
