"""The rating update: pure functions from a match, the ratings before it and the rules.

With :data:`~sedma_elo.rules.REFERENCE_RULES` the result equals the published C# method bit for
bit: bonus, malus and the clamp are computed in IEEE single precision (``float`` in C#), the
expected score and the update in double precision, and the new rating is rounded half to even.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from .model import NO_STATS, Match, PlayerStats, check_rating
from .rules import MAX_RATING, MIN_RATING, REFERENCE_RULES, Rules

__all__ = [
    "BonusTerm",
    "MalusTerm",
    "PlayerChange",
    "RatingResult",
    "ScoreBreakdown",
    "expected_score",
    "predict_win",
    "rate",
    "score_breakdown",
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


@dataclass(frozen=True, slots=True)
class PlayerChange:
    """The explained rating change of one player in one match.

    ``change = k * (score.adjusted - expected)``; ``rating_after = round(rating_before + change)``.
    """

    player_id: str
    side: Literal["a", "b"]
    rating_before: int
    k: int
    k_reason: str
    team_rating: float
    opponent_rating: float
    expected: float
    score: ScoreBreakdown
    change: float
    rating_after: int

    @property
    def delta(self) -> int:
        """The integer change actually applied."""
        return self.rating_after - self.rating_before


class RatingResult:
    """The outcome of :func:`rate`: one :class:`PlayerChange` per player, side a first.

    Read-only. ``new_ratings`` is known at once; for a one-against-one match :func:`rate` builds
    ``changes`` (the explanation) on first use, from the ratings it was given, so that rating
    many matches does not pay for explanations nobody reads. The explanation is the same either
    way.
    """

    __slots__ = ("_changes", "_match", "_new_ratings", "_pending", "_rules_label")

    def __init__(self, match: Match, rules_label: str, changes: tuple[PlayerChange, ...]) -> None:
        self._match = match
        self._rules_label = rules_label
        self._changes: tuple[PlayerChange, ...] | None = changes
        self._new_ratings: dict[str, int] | None = None
        self._pending: Callable[[], tuple[PlayerChange, ...]] | None = None

    @classmethod
    def _deferred(
        cls,
        match: Match,
        rules_label: str,
        new_ratings: dict[str, int],
        pending: Callable[[], tuple[PlayerChange, ...]],
    ) -> RatingResult:
        """A result whose ``changes`` are computed by ``pending()`` on first use."""
        self = cls.__new__(cls)
        self._match = match
        self._rules_label = rules_label
        self._changes = None
        self._new_ratings = new_ratings
        self._pending = pending
        return self

    @property
    def match(self) -> Match:
        """The match that was rated."""
        return self._match

    @property
    def rules_label(self) -> str:
        """``name@version`` of the rules used."""
        return self._rules_label

    @property
    def changes(self) -> tuple[PlayerChange, ...]:
        """One explained :class:`PlayerChange` per player, side a first."""
        changes = self._changes
        if changes is None:
            assert self._pending is not None
            changes = self._changes = self._pending()
            self._pending = None
        return changes

    def __getitem__(self, player_id: str) -> PlayerChange:
        for change in self.changes:
            if change.player_id == player_id:
                return change
        raise KeyError(player_id)

    @property
    def new_ratings(self) -> dict[str, int]:
        """Ratings after the match by player id (a new dict on each call)."""
        if self._new_ratings is not None:
            return dict(self._new_ratings)
        return {c.player_id: c.rating_after for c in self.changes}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RatingResult):
            return NotImplemented
        return (self.match, self.rules_label, self.changes) == (other.match, other.rules_label, other.changes)

    __hash__ = None  # type: ignore[assignment]  # like the match it holds

    def __reduce__(self) -> tuple[type[RatingResult], tuple[Match, str, tuple[PlayerChange, ...]]]:
        # Pickle and copy the built explanation, never the closure that would build it.
        return (RatingResult, (self.match, self.rules_label, self.changes))

    def __repr__(self) -> str:
        return (
            f"RatingResult(match={self.match!r}, rules_label={self.rules_label!r}, changes={self.changes!r})"
        )


# ---------------------------------------------------------------------------- score
def score_breakdown(outcome: Outcome, stats: PlayerStats, rules: Rules = REFERENCE_RULES) -> ScoreBreakdown:
    """The adjusted score of a player with ``stats`` and ``outcome`` under ``rules``.

    Results are cached per rules object: the score depends only on outcome and counts.
    """
    cache = _score_cache(rules)
    key = (outcome, stats.bad_moves, stats.won_by_16, stats.won_by_24, stats.won_by_4_and_last)
    found = cache.get(key)
    if found is None:
        if len(cache) >= _SCORE_CACHE_SIZE:
            cache.clear()
        found = cache[key] = _compute_score(outcome, stats, rules)
    return found


_SCORE_CACHE_SIZE = 65_536
_SCORE_CACHES: dict[int, tuple[Rules, dict[tuple[object, ...], ScoreBreakdown]]] = {}


def _score_cache(rules: Rules) -> dict[tuple[object, ...], ScoreBreakdown]:
    # Keyed by id with the rules kept alive beside the cache, so that a new rules object with the
    # same id can never see a stale cache, and hashing the rules is not paid on every call.
    entry = _SCORE_CACHES.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_SCORE_CACHES) > 64:
            _SCORE_CACHES.clear()
        entry = _SCORE_CACHES[id(rules)] = (rules, {})
    return entry[1]


def _compute_score(outcome: Outcome, stats: PlayerStats, rules: Rules) -> ScoreBreakdown:
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
    """Elo expected score ``1 / (1 + 10^((opponent - rating) / 400))``, in (0, 1)."""
    # math.pow is the C library's pow, the function C#'s Math.Pow calls.
    return 1.0 / (1.0 + math.pow(10.0, (opponent_rating - rating) / 400.0))


def _team_rating(ratings: list[int], rules: Rules) -> float | int:
    if len(ratings) == 1:
        return ratings[0]  # keeps the 1-vs-1 subtraction in integers, as in C#
    total = sum(ratings)
    return total if rules.team_rating == "sum" else total / len(ratings)


def predict_win(
    team_a: list[int] | tuple[int, ...],
    team_b: list[int] | tuple[int, ...],
    rules: Rules = REFERENCE_RULES,
) -> float:
    """Probability-like expected score of side a against side b from their current ratings."""
    return expected_score(_team_rating(list(team_a), rules), _team_rating(list(team_b), rules))


def _round(value: float, rules: Rules) -> int:
    if rules.rounding == "half_even":
        return round(value)  # Python rounds floats half to even, like C# Math.Round
    floor = int(value // 1)
    return floor + 1 if value - floor >= 0.5 else floor


# ---------------------------------------------------------------------------- rate
def rate(match: Match, ratings: Mapping[str, int], rules: Rules = REFERENCE_RULES) -> RatingResult:
    """Apply ``match`` to the ratings before it and explain every player's change.

    Args:
        match: the finished match (validated on construction).
        ratings: current ratings by player id; players missing from it start at
            ``rules.initial_rating``. Only the match's players are read.
        rules: the rule set (default: the published reference rules).

    Returns:
        A :class:`RatingResult`; ``ratings`` itself is not modified.

    Raises:
        ValidationError: a rating is not an int in ``[MIN_RATING, MAX_RATING]`` (field
            ``ratings.<player_id>``).

    Both sides' K factors and expected scores come from the ratings before the match. In a
    team match each player's expected score compares the two team ratings (``rules.team_rating``)
    and each player is updated with their own K and their own statistics.
    """
    if len(match.team_a) == 1:
        return _rate_single(match, ratings, rules)
    return _rate_explained(match, ratings, rules)


def _rate_single(match: Match, ratings: Mapping[str, int], rules: Rules) -> RatingResult:
    """rate() for one against one: the new ratings now, the explanation on first use.

    The same arithmetic as :func:`_rate_explained`, which builds the explanation later from
    copies of the two ratings (tests check that both agree).
    """
    a, b = match.team_a[0], match.team_b[0]
    initial = rules.initial_rating
    rating_a = ratings.get(a, initial)
    if type(rating_a) is not int or not MIN_RATING <= rating_a <= MAX_RATING:
        rating_a = check_rating(f"ratings.{a}", rating_a)
    rating_b = ratings.get(b, initial)
    if type(rating_b) is not int or not MIN_RATING <= rating_b <= MAX_RATING:
        rating_b = check_rating(f"ratings.{b}", rating_b)
    # expected_score() and score_breakdown() inlined: this is the hot path of every replay.
    expected_a = 1.0 / (1.0 + math.pow(10.0, (rating_b - rating_a) / 400.0))
    expected_b = 1.0 / (1.0 + math.pow(10.0, (rating_a - rating_b) / 400.0))
    winner = match.winner
    if winner == "a":
        outcome_a: Outcome = "win"
        outcome_b: Outcome = "loss"
    elif winner == "b":
        outcome_a, outcome_b = "loss", "win"
    else:
        outcome_a = outcome_b = "draw"
    hot = _HOT
    if hot[0] is not rules:
        hot = _hot(rules)
    _, cache, tiers, k_top, half_even, label = hot
    stats = match.stats
    st = stats.get(a, NO_STATS)
    found = cache.get((outcome_a, st.bad_moves, st.won_by_16, st.won_by_24, st.won_by_4_and_last))
    score_a = (found or score_breakdown(outcome_a, st, rules)).adjusted
    st = stats.get(b, NO_STATS)
    found = cache.get((outcome_b, st.bad_moves, st.won_by_16, st.won_by_24, st.won_by_4_and_last))
    score_b = (found or score_breakdown(outcome_b, st, rules)).adjusted
    k_a = k_b = k_top  # Rules.k_factor, inlined
    for below, k in tiers:
        if rating_a < below:
            k_a = k
            break
    for below, k in tiers:
        if rating_b < below:
            k_b = k
            break
    change_a = rating_a + k_a * (score_a - expected_a)
    change_b = rating_b + k_b * (score_b - expected_b)
    if half_even:
        new_a, new_b = round(change_a), round(change_b)
    else:
        new_a, new_b = _round(change_a, rules), _round(change_b, rules)

    def explain() -> tuple[PlayerChange, ...]:
        return _rate_explained(match, {a: rating_a, b: rating_b}, rules).changes

    return RatingResult._deferred(match, label, {a: new_a, b: new_b}, explain)


_Hot = tuple[
    Rules | None, dict[tuple[object, ...], ScoreBreakdown], tuple[tuple[int, int], ...], int, bool, str
]
#: What _rate_single needs of the rules it saw last, read once per call instead of per use.
_HOT: _Hot = (None, {}, (), 0, True, "")


def _hot(rules: Rules) -> _Hot:
    global _HOT
    tiers = tuple((t.below, t.k) for t in rules.k_tiers)
    _HOT = (rules, _score_cache(rules), tiers, rules.k_top, rules.rounding == "half_even", rules.label)
    return _HOT


def _rate_explained(match: Match, ratings: Mapping[str, int], rules: Rules) -> RatingResult:
    """rate() building every player's explanation at once (any match size)."""
    initial = rules.initial_rating
    before_a = [check_rating(f"ratings.{p}", ratings.get(p, initial)) for p in match.team_a]
    before_b = [check_rating(f"ratings.{p}", ratings.get(p, initial)) for p in match.team_b]
    team_a = _team_rating(before_a, rules)
    team_b = _team_rating(before_b, rules)
    expected_a = expected_score(team_a, team_b)
    expected_b = expected_score(team_b, team_a)
    if match.winner == "a":
        outcome_a: Outcome = "win"
        outcome_b: Outcome = "loss"
    elif match.winner == "b":
        outcome_a, outcome_b = "loss", "win"
    else:
        outcome_a = outcome_b = "draw"
    changes = []
    for side, team, before, own, other, expected, outcome in (
        ("a", match.team_a, before_a, team_a, team_b, expected_a, outcome_a),
        ("b", match.team_b, before_b, team_b, team_a, expected_b, outcome_b),
    ):
        for player_id, rating in zip(team, before, strict=True):
            k = rules.k_factor(rating)
            score = score_breakdown(outcome, match.stats_of(player_id), rules)
            change = k * (score.adjusted - expected)
            changes.append(
                PlayerChange(
                    player_id,
                    side,  # type: ignore[arg-type]
                    rating,
                    k,
                    rules.k_reason(rating),
                    float(own),
                    float(other),
                    expected,
                    score,
                    change,
                    _round(rating + change, rules),
                )
            )
    return RatingResult(match, rules.label, tuple(changes))
