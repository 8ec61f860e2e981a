"""The rating maths in one place: K, the adjusted score, the expected score, rounding, the range.

:mod:`sedma_elo.core.engine` composes these into ``rate()``; ``Rules.k_factor``,
``Rules.player_k``, ``Rules.dominance`` ... are these functions. The numba kernel
(:mod:`sedma_elo.batch._kernel_jit`) keeps its own mirror of them, in the same order and
precision, tested to agree bit for bit.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from . import reasons
from .coefficients import MAX_RATING, MIN_RATING

if TYPE_CHECKING:
    from .model import Match, PlayerStats
    from .rules import Rules

__all__ = [
    "BonusTerm",
    "ClampSide",
    "MalusTerm",
    "Outcome",
    "ScoreBreakdown",
    "compute_score",
    "expected_score",
    "f32",
    "k_factor",
    "k_games",
    "newcomer_gifts",
    "newcomer_share",
    "player_k",
    "round_rating",
]

Outcome = Literal["win", "loss", "draw"]
ClampSide = Literal["none", "min", "max"]

_F32 = struct.Struct("<f")


def f32(x: float) -> float:
    """Round a double to the nearest IEEE single (as a Python float holding that exact value).

    Rounding an exact double result of +, -, * of two singles to single gives the correctly
    rounded single-precision result, so this reproduces C# ``float`` arithmetic.
    """
    return float(_F32.unpack(_F32.pack(x))[0])


def _identity(x: float) -> float:
    return x


# ---------------------------------------------------------------------------- K
def k_factor(rules: Rules, rating: int) -> int:
    """K for a player currently rated ``rating`` (the tier boundary belongs to the higher tier).

    ``ks[i]`` for the number ``i`` of boundaries at or below ``rating`` (``ks`` ends with the top K),
    the kernel's count; ``rate()``'s fast path does the same bisection on the same table.
    """
    bounds, ks = rules.tier_table
    return ks[bisect_right(bounds, rating)]


def k_reason(rules: Rules, rating: int) -> str:
    """A short sentence saying why :func:`k_factor` chose its K (a template of ``core/reasons.py``)."""
    previous: int | None = None
    for tier in rules.k_tiers:
        if rating < tier.below:
            if previous is None:
                return reasons.K_TIER_BELOW.format(rating=rating, bound=tier.below)
            return reasons.K_TIER_IN.format(rating=rating, low=previous, bound=tier.below)
        previous = tier.below
    if previous is None:
        return reasons.K_SINGLE
    return reasons.K_TIER_ABOVE.format(rating=rating, low=previous)


def k_games(rules: Rules, games: int) -> float:
    """The games-played curve ``max(a / (games + b) ** c, k_games_min)`` (double precision)."""
    value = rules.k_games_a / math.pow(games + rules.k_games_b, rules.k_games_c)
    return value if value > rules.k_games_min else rules.k_games_min


def player_k(rules: Rules, rating: int, games: int) -> int | float:
    """K of a player rated ``rating`` who played ``games`` games before this match.

    The margin-of-victory multiplier is not included (it depends on the match). In the
    reference mode (``rating``, no new-player multiplier) this is the int :func:`k_factor`.
    The operations and their order are the batch kernel's; change both together.
    """
    k: int | float = k_factor(rules, rating)
    mode = rules.k_mode
    if mode != "rating":
        g = k_games(rules, games)
        if mode == "games":
            k = g
        elif mode == "sum":
            k = k + g
        elif mode == "product":
            k = k * g
        elif mode == "min":
            k = k if k < g else g
        else:
            k = k if k > g else g
    if games < rules.k_new_player_games:
        k = k * rules.k_new_player_multiplier
    return k


def k_explained(rules: Rules, rating: int, games: int | None) -> str:
    """Why a player got their K, in words (tiers, games curve, new-player multiplier)."""
    reason = k_reason(rules, rating)
    if rules.k_mode != "rating":
        assert games is not None
        curve = reasons.K_CURVE.format(
            a=f"{rules.k_games_a:g}",
            games=games,
            b=f"{rules.k_games_b:g}",
            c=f"{rules.k_games_c:g}",
            floor=f"{rules.k_games_min:g}",
            value=f"{k_games(rules, games):.4g}",
        )
        if rules.k_mode == "games":
            reason = reasons.K_BY_GAMES.format(curve=curve)
        else:
            template = reasons.K_COMBINED[rules.k_mode]
            reason = template.format(tier=k_factor(rules, rating), reason=reason, curve=curve)
    if games is not None and games < rules.k_new_player_games:
        reason = reasons.K_NEW_PLAYER.format(
            reason=reason,
            multiplier=f"{rules.k_new_player_multiplier:g}",
            games=games,
            needed=rules.k_new_player_games,
        )
    return reason


# ---------------------------------------------------------------------------- margin of victory
def dominance(rules: Rules, bad_moves: int, won_by_16: int, won_by_24: int, won_by_4_and_last: int) -> float:
    """A side's margin-of-victory weight of its counts (double precision, this order)."""
    return (
        rules.margin_weight_16 * won_by_16
        + rules.margin_weight_24 * won_by_24
        + rules.margin_weight_4_and_last * won_by_4_and_last
        + rules.margin_weight_bad_moves * bad_moves
    )


def margin_multiplier(rules: Rules, margin: float) -> float:
    """``clamp(1 + margin_scale * margin, margin_min, margin_max)`` for ``margin = D_win - D_lose``."""
    value = 1.0 + rules.margin_scale * margin
    if value < rules.margin_min:
        return rules.margin_min
    if value > rules.margin_max:
        return rules.margin_max
    return value


def team_dominance(match: Match, team: tuple[str, ...], rules: Rules) -> float:
    """The sum of :func:`dominance` over a team's players, in team order."""
    total = dominance(rules, *match.stats_of(team[0]).key())
    for player_id in team[1:]:
        total = total + dominance(rules, *match.stats_of(player_id).key())
    return total


# ---------------------------------------------------------------------------- score
@dataclass(frozen=True, slots=True)
class BonusTerm:
    """One bonus kind for one player: ``value = min(count * per_round, cap)``."""

    kind: Literal["won_by_16", "won_by_24", "won_by_4_and_last"]
    count: int
    per_round: float
    cap: float
    uncapped: float
    value: float

    @property
    def capped(self) -> bool:
        """True when the cap cut this bonus (``count * per_round > cap``)."""
        return self.uncapped > self.cap


@dataclass(frozen=True, slots=True)
class MalusTerm:
    """The bad-move malus: ``value = min(count * per_bad_move, cap)``, subtracted from the score."""

    count: int
    per_bad_move: float
    cap: float
    uncapped: float
    value: float

    @property
    def capped(self) -> bool:
        """True when the cap cut the malus."""
        return self.uncapped > self.cap


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """How one player's adjusted score was formed (depends only on outcome, counts and rules).

    ``adjusted = clamp(base + bonus_scaled - malus.value, score_min, score_max)``.
    """

    outcome: Outcome
    base: float
    bonuses: tuple[BonusTerm, BonusTerm, BonusTerm]
    bonus_total: float
    bonus_scale: float
    bonus_scaled: float
    malus: MalusTerm
    unclamped: float
    adjusted: float
    clamp: ClampSide

    @property
    def clamp_cut(self) -> float:
        """How much score the clamp removed (>0, at the top) or added (<0, at the bottom)."""
        return self.unclamped - self.adjusted


def compute_score(outcome: Outcome, stats: PlayerStats, rules: Rules) -> ScoreBreakdown:
    """The adjusted score of a player with ``stats`` and ``outcome`` (uncached; see ``score_breakdown``)."""
    q = f32 if rules.arithmetic == "float32" else _identity
    terms = []
    for kind, count, bonus in (
        ("won_by_16", stats.won_by_16, rules.bonus_16),
        ("won_by_24", stats.won_by_24, rules.bonus_24),
        ("won_by_4_and_last", stats.won_by_4_and_last, rules.bonus_4_and_last),
    ):
        per, cap = q(bonus.per_round), q(bonus.cap)
        uncapped = q(q(float(count)) * per)
        value = uncapped if uncapped < cap else cap  # Unity's Mathf.Min
        terms.append(BonusTerm(kind, count, per, cap, uncapped, value))  # type: ignore[arg-type]
    total = q(q(terms[0].value + terms[1].value) + terms[2].value)
    if outcome == "win":
        base, scale = 1.0, 1.0
    elif outcome == "loss":
        base, scale = 0.0, q(rules.loser_bonus_scale)
    else:
        base, scale = 0.5, q(rules.draw_bonus_scale)
    scaled = q(total * scale)
    per_bad, malus_cap = q(rules.malus_per_bad_move), q(rules.malus_cap)
    malus_uncapped = q(q(float(stats.bad_moves)) * per_bad)
    malus_value = malus_uncapped if malus_uncapped < malus_cap else malus_cap
    malus = MalusTerm(stats.bad_moves, per_bad, malus_cap, malus_uncapped, malus_value)
    unclamped = q(q(base + scaled) - malus_value)
    low, high = q(rules.score_min), q(rules.score_max)
    # Unity's Mathf.Clamp tests the lower bound first.
    clamp: ClampSide
    if unclamped < low:
        adjusted, clamp = low, "min"
    elif unclamped > high:
        adjusted, clamp = high, "max"
    else:
        adjusted, clamp = unclamped, "none"
    return ScoreBreakdown(
        outcome, base, (terms[0], terms[1], terms[2]), total, scale, scaled, malus, unclamped, adjusted, clamp
    )


# ---------------------------------------------------------------------------- expectation
def expected_score(rating: float, opponent_rating: float) -> float:
    """Elo expected score ``1 / (1 + 10^((opponent - rating) / 400))``, in [0, 1].

    math.pow is the C library's pow, the function C#'s Math.Pow calls. Where the power exceeds
    the double range (only team sums can differ by more than 123,000 points) C#'s Math.Pow gives
    +Infinity and the expression 0; Python raises OverflowError instead, so that case is spelled
    out: the expected score is 0.0, as in C# and the kernel.
    """
    try:
        return 1.0 / (1.0 + math.pow(10.0, (opponent_rating - rating) / 400.0))
    except OverflowError:
        return 0.0


def team_rating(ratings: list[int], rules: Rules) -> float | int:
    """A side's rating for the expected score: the player's own, or the team's mean or sum."""
    if len(ratings) == 1:
        return ratings[0]  # keeps the 1-vs-1 subtraction in integers, as in C#
    total = sum(ratings)
    return total if rules.team_rating == "sum" else total / len(ratings)


# ---------------------------------------------------------------------------- the update
def round_rating(value: float, half_up: bool) -> int:
    """Round half to even (C#'s ``Math.Round``, Python's ``round``) or, with ``half_up``, half up."""
    if not half_up:
        return round(value)
    floor = int(value // 1)
    return floor + 1 if value - floor >= 0.5 else floor


def clamp_rating(after: int, floor: int | None) -> int:
    """``after`` raised to ``floor`` (or ``MIN_RATING``) and lowered to ``MAX_RATING``."""
    low = MIN_RATING if floor is None else floor
    if after < low:
        return low
    return MAX_RATING if after > MAX_RATING else after


def zero_sum_change(
    match: Match, ks: Mapping[str, int | float], scores: Mapping[str, ScoreBreakdown], expected_a: float
) -> tuple[float, float]:
    """The shared K and the transfer score of side a in the zero-sum mode (kernel's order of ops)."""
    k_values = list(ks.values())
    k_total: int | float = k_values[0]
    for value in k_values[1:]:
        k_total = k_total + value
    shared_k = k_total / len(k_values)
    mean_a = _mean_score([scores[p].adjusted for p in match.team_a])
    mean_b = _mean_score([scores[p].adjusted for p in match.team_b])
    return shared_k, (mean_a + (1.0 - mean_b)) * 0.5


def newcomer_share(rules: Rules, rating: int, games: int) -> float:
    """Share of a new player's own change that counts as their extra (``update.newcomer_balance``).

    The multiplier's part ``(m - 1) / m`` (0 when ``m`` is at most 1); with
    ``newcomer_balance_games`` the part of their K above the K the same player would have with
    ``k_new_player_games`` games, ``1 - K(rating, new_player_games) / K(rating, games)`` (the games
    curve's extra K as well as the multiplier's; 0 when the settled K is not smaller). The
    kernel's order of operations.
    """
    if rules.newcomer_balance_games:
        k = player_k(rules, rating, games)
        settled = player_k(rules, rating, rules.k_new_player_games)
        return 1.0 - settled / k if k > settled else 0.0
    m = rules.k_new_player_multiplier
    return (m - 1.0) / m if m > 1.0 else 0.0  # a multiplier of at most 1 adds nothing to give back


def newcomer_gifts(
    match: Match,
    rules: Rules,
    games: Mapping[str, int | None],
    changes: Mapping[str, float],
    ratings: Mapping[str, int],
) -> dict[str, float]:
    """What each player gives back for the new players they met (``update.newcomer_balance``).

    ``changes`` holds every player's own unrounded change ``K * (S - E)`` and ``ratings`` their
    rating before the match. A new player's extra change is ``change *``
    :func:`newcomer_share`; the opposing side gives back ``newcomer_balance`` of it, split evenly
    among its players, so that with a balance of 1 the multiplier (and with
    ``newcomer_balance_games`` the games curve too) adds no points to the pair. The result maps
    each player to the sum to subtract from their own change (only players who owe something).
    The kernel's order of operations (one against one: one gift, divided by 1).
    """
    balance = rules.newcomer_balance
    gifts: dict[str, float] = {}
    for team, other in ((match.team_a, match.team_b), (match.team_b, match.team_a)):
        for player_id in team:
            played = games[player_id] or 0
            if played < rules.k_new_player_games:
                share = newcomer_share(rules, ratings[player_id], played)
                gift = balance * (changes[player_id] * share) / len(other)
                for opponent in other:
                    gifts[opponent] = gifts.get(opponent, 0.0) + gift
    return gifts


def _mean_score(values: list[float]) -> float:
    return values[0] if len(values) == 1 else (values[0] + values[1]) / 2
