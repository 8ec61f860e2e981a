"""Fairness measures of a rule set: drift of the pool, the "losing well" gain, newcomer convergence.

These are the figures the designers ask for beside forecast quality ("does this rating feel
fair?"). Each is computed from a replay of a history (drift, convergence) or from the rules
alone (losing well), so the tuner can compute them for every trial and the backtest for every
rule set:

* **drift per 100,000 matches**: the change of the pool's mean rating (every player seen, a new
  player counting from the initial rating) over the replay, scaled to 100,000 matches; positive
  is inflation, negative deflation, 0 for a zero-sum rule set without a floor.
* **losing well**: :func:`losing_well_gain`, the rating gained by a loss with every bonus at its
  cap over a plain loss, between two established players at the initial rating.
* **newcomer convergence**: :func:`newcomer_convergence`, how many matches a newcomer needs until
  their rating is first within a tolerance of the rating they settle at.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.fold import RatingState
from ..core.model import Match, PlayerStats
from ..core.rules import REFERENCE_RULES, Rules
from ..errors import ValidationError
from .forecast import Forecast
from .table import MatchTable

__all__ = [
    "ESTABLISHED_GAMES",
    "MIN_BONUS_ROUNDS",
    "Fairness",
    "drift_components",
    "drift_per_100k",
    "fairness_of",
    "losing_well_gain",
    "newcomer_convergence",
    "segment_drifts",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Games played assumed for the "losing well" comparison (an established player).
ESTABLISHED_GAMES = 100

#: The loser of the "good loss" wins at least this many rounds of each bonus kind, even where the
#: rules pay no bonus for it: a rule set that pays nothing but weighs those rounds in its margin of
#: victory would otherwise be measured on a loss without them.
MIN_BONUS_ROUNDS = 2

#: Newcomer convergence on a real history: players whose first match comes after this share of it
#: (earlier ones enter a pool that is itself still unrated) and who play at least ``MIN_MATCHES``.
NEWCOMER_AFTER = 0.1
MIN_MATCHES = 6


def losing_well_gain(rules: Rules = REFERENCE_RULES) -> tuple[int, int]:
    """(gain of a loss with every bonus at its cap over a plain loss, gain of a plain win), in points.

    Both between two established players (:data:`ESTABLISHED_GAMES` games each, for rules whose K
    depends on games played) at the initial rating, rated against one
    :class:`~sedma_elo.core.fold.RatingState` (not committed).
    The loser of the good loss won ``ceil(cap / per_round) + 1`` rounds of each bonus kind (enough
    to reach every cap), and at least :data:`MIN_BONUS_ROUNDS`.
    """

    def enough(per: float, cap: float) -> int:
        needed = 0 if per <= 0 else math.ceil(cap / per) + 1
        return max(needed, MIN_BONUS_ROUNDS)

    best = PlayerStats(
        won_by_16=enough(rules.bonus_16.per_round, rules.bonus_16.cap),
        won_by_24=enough(rules.bonus_24.per_round, rules.bonus_24.cap),
        won_by_4_and_last=enough(rules.bonus_4_and_last.per_round, rules.bonus_4_and_last.cap),
    )
    r0 = rules.initial_rating
    state = RatingState.of({"x": r0, "y": r0}, {"x": ESTABLISHED_GAMES, "y": ESTABLISHED_GAMES})

    def delta(match: Match) -> int:
        return state.rate(match, rules)["x"].delta

    good_loss = delta(Match.single("x", "y", "b", best, PlayerStats()))
    plain_loss = delta(Match.single("x", "y", "b"))
    plain_win = delta(Match.single("x", "y", "a"))
    return good_loss - plain_loss, plain_win


def drift_per_100k(table: MatchTable, forecast: Forecast) -> float:
    """Change of the mean rating of every player seen in ``table`` over its replay, per 100,000 matches.

    Returns ``nan`` for a forecast without ratings.
    """
    if forecast.final is None or forecast.initial_rating is None:
        return float("nan")
    seen = np.unique(np.concatenate([table.a, table.b]))
    change = float(forecast.final[seen].mean() - forecast.initial_rating)
    return change / len(table) * 100_000


def _created(table: MatchTable, forecast: Forecast) -> tuple[FloatArray, IntArray, int]:
    """Rating points each match created (both players' changes), games each player had played
    before it (an ``(n, 2)`` array), and how many players the table has seen."""
    assert forecast.rating_a is not None and forecast.final is not None
    n = len(table)
    who, before = _appearances(table, forecast)
    # The rating after each appearance is the rating before the player's next one (or the final).
    order = np.argsort(who, kind="stable")
    sorted_who = who[order]
    first = np.r_[True, sorted_who[1:] != sorted_who[:-1]]
    last = np.r_[first[1:], True]
    after_sorted = np.r_[before[order][1:], 0.0]
    after_sorted[last] = forecast.final[sorted_who[last]]
    after = np.empty_like(before)
    after[order] = after_sorted
    index = np.arange(2 * n)
    played = np.empty(2 * n, dtype=np.int64)
    played[order] = index - np.maximum.accumulate(np.where(first, index, 0))
    players = int(np.unique(who).size)
    return (after - before).reshape(n, 2).sum(axis=1), played.reshape(n, 2), players


def drift_components(table: MatchTable, forecast: Forecast, games: int) -> tuple[float, float]:
    """Drift per 100,000 matches split by who played: (both players had ``games`` games, the others).

    The two parts add up to :func:`drift_per_100k`. Matches between established players create
    points through bonuses above a win's 1 and a loser's share; matches with a newcomer create or
    destroy them through the newcomers' larger K, in a proportion that depends on how often
    newcomers win in that history, which is why a rule set's drift can balance on one history and
    not on another. Returns ``nan``s for a forecast without ratings.
    """
    if forecast.rating_a is None or forecast.final is None:
        return float("nan"), float("nan")
    created, played, players = _created(table, forecast)
    established = (played >= games).all(axis=1)
    scale = 100_000 / players / len(table)
    return float(created[established].sum()) * scale, float(created[~established].sum()) * scale


def segment_drifts(table: MatchTable, forecast: Forecast, segments: int) -> list[float]:
    """Drift per 100,000 matches within each of ``segments`` equal runs of consecutive matches.

    A segment's drift is the rating points its matches created (the sum of both players' rating
    changes) over every player seen in ``table``, per 100,000 of its matches, so the segments'
    mean is :func:`drift_per_100k` of the whole replay (segments of equal length). A rule set
    whose inflation and deflation balance only on average over one history (bonuses above a
    win's 1 against newcomers' high K) shows it as segments far from 0. Returns ``nan``s for a
    forecast without ratings.

    Raises:
        ValidationError: ``segments`` below 1 or above the number of matches.
    """
    n = len(table)
    if not 1 <= segments <= n:
        raise ValidationError("drift_segments", f"must be between 1 and {n}, got {segments}")
    if forecast.rating_a is None or forecast.final is None:
        return [float("nan")] * segments
    created, _, players = _created(table, forecast)
    return [
        float(created[part].sum()) / players / part.size * 100_000
        for part in np.array_split(np.arange(n), segments)
    ]


def newcomer_convergence(
    who: IntArray,
    rating: FloatArray,
    newcomers: npt.ArrayLike,
    tolerance: float,
    min_matches: int = MIN_MATCHES,
    min_distance: float = 0.0,
) -> list[int]:
    """For each newcomer with at least ``min_matches`` ratings: matches until first within ``tolerance``.

    ``who[i]`` and ``rating[i]`` are the player and their pre-match rating of the ``i``-th
    appearance, in playing order. A newcomer's settled rating is the mean of the last third of
    their appearances; one who never gets within ``tolerance`` of it counts as their number of
    appearances. Newcomers whose settled rating is within ``min_distance`` of their entry rating
    are left out (they had nowhere to go). Vectorised over players (a real history has tens of
    thousands).
    """
    want = np.zeros(int(who.max(initial=-1)) + 1, dtype=bool)
    ids = np.asarray(newcomers, dtype=np.int64)
    want[ids[ids < want.size]] = True
    keep = want[who]
    who, rating = who[keep], rating[keep]
    if who.size == 0:
        return []
    order = np.argsort(who, kind="stable")
    who, rating = who[order], rating[order]
    starts = np.flatnonzero(np.r_[True, who[1:] != who[:-1]])
    counts = np.diff(np.r_[starts, who.size])
    pos = np.arange(who.size) - np.repeat(starts, counts)
    tail = counts // 3
    in_tail = pos >= np.repeat(counts - tail, counts)
    tail_sum = np.bincount(np.repeat(np.arange(starts.size), counts), weights=np.where(in_tail, rating, 0.0))
    settled = tail_sum / np.maximum(tail, 1)
    close = np.abs(rating - np.repeat(settled, counts)) <= tolerance
    first = np.minimum.reduceat(np.where(close, pos, np.repeat(counts, counts)), starts)
    keep = (counts >= min_matches) & (np.abs(settled - rating[starts]) > min_distance)
    return [int(x) for x in first[keep]]


def _appearances(table: MatchTable, forecast: Forecast) -> tuple[IntArray, FloatArray]:
    """(player, pre-match rating) of every appearance in playing order, side a before side b."""
    assert forecast.rating_a is not None and forecast.rating_b is not None
    n = len(table)
    who = np.empty(2 * n, dtype=np.int64)
    val = np.empty(2 * n)
    who[0::2], who[1::2] = table.a, table.b
    val[0::2], val[1::2] = forecast.rating_a, forecast.rating_b
    return who, val


@dataclass(frozen=True, slots=True)
class Fairness:
    """The fairness figures of one rule set on one history.

    Attributes:
        drift_per_100k: change of the pool's mean rating per 100,000 matches (points).
        losing_well: :func:`losing_well_gain`'s first figure (points).
        win_gain: a plain win in the same situation (points, for scale).
        convergence_median: median matches a newcomer needs to get within ``tolerance`` of their
            settled rating (``nan`` without newcomers; see :func:`fairness_of` for who counts).
        newcomers: how many newcomers that median is over.
        tolerance: the tolerance in rating points.
        segment_drifts: :func:`segment_drifts` of the replay when asked for (empty otherwise).
    """

    drift_per_100k: float
    losing_well: int
    win_gain: int
    convergence_median: float
    newcomers: int
    tolerance: float
    segment_drifts: tuple[float, ...] = ()

    @property
    def worst_drift(self) -> float:
        """The largest |drift| of the whole replay and of each of its segments (``nan`` if unknown)."""
        values = [self.drift_per_100k, *self.segment_drifts]
        if not all(math.isfinite(v) for v in values):
            return float("nan")
        return max(abs(v) for v in values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return asdict(self)


def fairness_of(
    table: MatchTable, forecast: Forecast, rules: Rules, *, tolerance: float = 50.0, segments: int = 1
) -> Fairness:
    """Drift and newcomer convergence of ``forecast`` (a replay of ``table`` with ``rules``), and losing well.

    With ``segments`` above 1 the drift of each of that many eras of the replay is added
    (:func:`segment_drifts`).

    Newcomers are the players whose first match comes after the first :data:`NEWCOMER_AFTER` of
    the history, who play at least :data:`MIN_MATCHES` matches and who settle more than
    ``tolerance`` away from where they entered (on a real history most newcomers settle near the
    initial rating, and counting them would make every rule set converge "at once").
    """
    good, win = losing_well_gain(rules)
    drift = drift_per_100k(table, forecast)
    eras = tuple(segment_drifts(table, forecast, segments)) if segments > 1 else ()
    if forecast.rating_a is None:
        return Fairness(drift, good, win, float("nan"), 0, tolerance, eras)
    who, val = _appearances(table, forecast)
    players, first_seen = np.unique(who, return_index=True)
    newcomers = players[first_seen >= NEWCOMER_AFTER * len(who)]
    steps = newcomer_convergence(who, val, newcomers, tolerance, min_distance=tolerance)
    median = float(np.median(steps)) if steps else float("nan")
    return Fairness(drift, good, win, median, len(steps), tolerance, eras)
