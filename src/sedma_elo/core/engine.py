"""The rating update: pure functions from a match, the ratings before it and the rules.

With :data:`~sedma_elo.core.rules.REFERENCE_RULES` the result equals the published C# method bit for
bit: bonus, malus and the clamp are computed in IEEE single precision (``float`` in C#), the
expected score and the update in double precision, and the new rating is rounded half to even.
The maths itself (K, the adjusted score, the expected score, rounding, the range) is in
:mod:`sedma_elo.core.formula`; this module composes it and explains the result.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Literal

from ..errors import ValidationError
from . import reasons
from .formula import (
    BonusTerm,
    MalusTerm,
    Outcome,
    ScoreBreakdown,
    clamp_rating,
    compute_score,
    expected_score,
    k_explained,
    newcomer_gifts,
    round_rating,
    team_dominance,
    team_rating,
    zero_sum_change,
)
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


@dataclass(frozen=True, slots=True)
class PlayerChange:
    """The explained rating change of one player in one match.

    ``change = k * (score.adjusted - expected)``; ``rating_after = round(rating_before + change)``.
    Under the rule variants (``docs/rules.md``) ``k`` may be a float, the zero-sum mode computes
    ``change`` from both players' scores, and ``notes`` says in words what each variant did.

    Attributes:
        games_played: games the player had played before this match, when given to :func:`rate`.
        notes: one sentence per rule variant that changed this player's update (empty under the
            reference rules).
    """

    player_id: str
    side: Literal["a", "b"]
    rating_before: int
    k: int | float
    k_reason: str
    team_rating: float
    opponent_rating: float
    expected: float
    score: ScoreBreakdown
    change: float
    rating_after: int
    games_played: int | None = None
    notes: tuple[str, ...] = ()

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
        # Pickle and copy the built explanation, never the function that would build it.
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
        found = cache[key] = compute_score(outcome, stats, rules)
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


def predict_win(
    team_a: list[int] | tuple[int, ...],
    team_b: list[int] | tuple[int, ...],
    rules: Rules = REFERENCE_RULES,
) -> float:
    """Probability-like expected score of side a against side b from their current ratings."""
    return expected_score(team_rating(list(team_a), rules), team_rating(list(team_b), rules))


def check_games_played(field: str, value: object) -> int:
    """Return ``value`` if it is a non-negative int games count (bool refused), else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be a non-negative integer, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValidationError(field, f"must be >= 0, got {value}")
    return value


def _has_variants(rules: Rules) -> bool:
    return (
        rules.uses_games_played
        or rules.uses_margin
        or rules.zero_sum
        or rules.zero_sum_established
        or rules.zero_sum_newcomers
        or rules.rating_floor is not None
    )


# ---------------------------------------------------------------------------- rate
def rate(
    match: Match,
    ratings: Mapping[str, int],
    rules: Rules = REFERENCE_RULES,
    *,
    games_played: Mapping[str, int] | None = None,
) -> RatingResult:
    """Apply ``match`` to the ratings before it and explain every player's change.

    Args:
        match: the finished match (validated on construction).
        ratings: current ratings by player id; players missing from it start at
            ``rules.initial_rating``. Only the match's players are read.
        rules: the rule set (default: the published reference rules).
        games_played: games each player had played before this match (missing players: 0).
            Required when the rules' K depends on it (:attr:`Rules.uses_games_played`).

    Returns:
        A :class:`RatingResult`; ``ratings`` and ``games_played`` are not modified.

    Raises:
        ValidationError: a rating is not an int in ``[MIN_RATING, MAX_RATING]`` (field
            ``ratings.<player_id>``); a games count is not a non-negative int (field
            ``games_played.<player_id>``); ``games_played`` is missing but the rules need it.

    Both sides' K factors and expected scores come from the ratings before the match. In a
    team match each player's expected score compares the two team ratings (``rules.team_rating``)
    and each player is updated with their own K and their own statistics.

    Variants (``docs/rules.md``): K may come from games played; the margin-of-victory
    multiplier scales every K of the match; in the zero-sum mode side a moves by
    ``D = round(K * (S - expected_a))`` with ``K`` the mean of the players' K and
    ``S = (mean adjusted score of a + 1 - mean adjusted score of b) / 2``, and side b by ``-D``
    (with ``zero_sum_established`` only when every player has ``k_new_player_games`` games or more);
    a rating floor lifts any rating that would end below it. Every new rating is then kept in
    ``[MIN_RATING, MAX_RATING]`` (``docs/rules.md``, "The rating range"; the player's ``notes``
    say so when it acts), so that no rule set leaves a rating that later matches would refuse.
    """
    hot = _HOT
    if hot[0] is not rules:
        hot = _hot(rules)
    if hot[6]:  # no variant: the fast one-against-one path applies
        if len(match.team_a) == 1:
            return _rate_single(match, ratings, rules, games_played, hot)
    elif games_played is None and rules.uses_games_played:
        raise ValidationError(
            "games_played", f"rules {rules.label} compute K from games played: pass games_played"
        )
    return _rate_explained(match, ratings, rules, games_played)


def _rate_single(
    match: Match,
    ratings: Mapping[str, int],
    rules: Rules,
    games_played: Mapping[str, int] | None,
    hot: _Hot,
) -> RatingResult:
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
    # The expected score and score_breakdown()'s cache lookup inlined, and K by the same
    # bisection as formula.k_factor: this is the hot path of every replay.
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
    _, cache, bounds, ks, half_up, label, _ = hot
    stats = match.stats
    st = stats.get(a, NO_STATS)
    breakdown_a = cache.get((outcome_a, st.bad_moves, st.won_by_16, st.won_by_24, st.won_by_4_and_last))
    if breakdown_a is None:
        breakdown_a = score_breakdown(outcome_a, st, rules)
    st = stats.get(b, NO_STATS)
    breakdown_b = cache.get((outcome_b, st.bad_moves, st.won_by_16, st.won_by_24, st.won_by_4_and_last))
    if breakdown_b is None:
        breakdown_b = score_breakdown(outcome_b, st, rules)
    k_a, k_b = ks[bisect_right(bounds, rating_a)], ks[bisect_right(bounds, rating_b)]
    change_a = k_a * (breakdown_a.adjusted - expected_a)
    change_b = k_b * (breakdown_b.adjusted - expected_b)
    if half_up:
        new_a, new_b = round_rating(rating_a + change_a, True), round_rating(rating_b + change_b, True)
    else:
        new_a, new_b = round(rating_a + change_a), round(rating_b + change_b)
    in_range = MIN_RATING <= new_a <= MAX_RATING and MIN_RATING <= new_b <= MAX_RATING
    if not in_range:
        new_a, new_b = clamp_rating(new_a, None), clamp_rating(new_b, None)

    games = None
    if games_played is not None:
        games = {p: check_games_played(f"games_played.{p}", games_played.get(p, 0)) for p in (a, b)}
    # The values go to the explanation as two tuples bound by partial, not captured by a closure:
    # captured, every one of them would be a cell variable of this function (rate() 0.87-0.90x
    # elote's speed instead of 1.04-1.05x; docs/engine.md, "Speed").
    values = (a, b, rating_a, rating_b, k_a, k_b, expected_a, expected_b, breakdown_a, breakdown_b)
    later = (change_a, change_b, new_a, new_b, in_range)
    explain = partial(_explain_single, match, rules, games, values, later)
    return RatingResult._deferred(match, label, {a: new_a, b: new_b}, explain)


_SingleValues = tuple[str, str, int, int, int, int, float, float, ScoreBreakdown, ScoreBreakdown]
_Side = tuple[str, Literal["a", "b"], int, int, int, float, ScoreBreakdown, float, int, int | None]


def _explain_single(
    match: Match,
    rules: Rules,
    games: dict[str, int] | None,
    values: _SingleValues,
    later: tuple[float, float, int, int, bool],
) -> tuple[PlayerChange, ...]:
    """The explanation of a match :func:`_rate_single` rated, from the values it computed."""
    a, b, rating_a, rating_b, k_a, k_b, expected_a, expected_b, breakdown_a, breakdown_b = values
    change_a, change_b, new_a, new_b, in_range = later
    if not in_range:  # the range's note: the general path writes it
        return _rate_explained(match, {a: rating_a, b: rating_b}, rules, games).changes
    # Without a variant the explanation holds only what was computed above (K from its tier,
    # no notes): built from those values instead of rating the match a second time.
    games_a, games_b = (None, None) if games is None else (games[a], games[b])
    sides: tuple[_Side, _Side] = (
        (a, "a", rating_a, rating_b, k_a, expected_a, breakdown_a, change_a, new_a, games_a),
        (b, "b", rating_b, rating_a, k_b, expected_b, breakdown_b, change_b, new_b, games_b),
    )
    return tuple(
        PlayerChange(pid, side, r, k, k_explained(rules, r, g), float(r), float(o), e, bd, c, new, g)
        for pid, side, r, o, k, e, bd, c, new, g in sides
    )


_Hot = tuple[
    Rules | None, dict[tuple[object, ...], ScoreBreakdown], tuple[int, ...], tuple[int, ...], bool, str, bool
]
#: What rate() needs of the rules it saw last, read once per call instead of per use:
#: (rules, score cache, tier boundaries, tier Ks, rounds half up, label, no variant in use).
_HOT: _Hot = (None, {}, (), (), False, "", False)


def _hot(rules: Rules) -> _Hot:
    global _HOT
    bounds, ks = rules.tier_table
    plain = not _has_variants(rules)
    _HOT = (rules, _score_cache(rules), bounds, ks, rules.rounding == "half_up", rules.label, plain)
    return _HOT


def _rate_explained(
    match: Match, ratings: Mapping[str, int], rules: Rules, games_played: Mapping[str, int] | None = None
) -> RatingResult:
    """rate() building every player's explanation at once (any match size, any variant)."""
    initial = rules.initial_rating
    before_a = [check_rating(f"ratings.{p}", ratings.get(p, initial)) for p in match.team_a]
    before_b = [check_rating(f"ratings.{p}", ratings.get(p, initial)) for p in match.team_b]
    games: dict[str, int | None] = {p: None for p in match.players}
    if games_played is not None:
        for p in match.players:
            games[p] = check_games_played(f"games_played.{p}", games_played.get(p, 0))
    team_a = team_rating(before_a, rules)
    team_b = team_rating(before_b, rules)
    expected_a = expected_score(team_a, team_b)
    expected_b = expected_score(team_b, team_a)
    if match.winner == "a":
        outcome_a: Outcome = "win"
        outcome_b: Outcome = "loss"
    elif match.winner == "b":
        outcome_a, outcome_b = "loss", "win"
    else:
        outcome_a = outcome_b = "draw"
    match_notes: list[str] = []
    multiplier = 1.0
    if rules.uses_margin:
        dom_a, dom_b = team_dominance(match, match.team_a, rules), team_dominance(match, match.team_b, rules)
        margin = dom_a - dom_b if match.winner == "a" else dom_b - dom_a if match.winner == "b" else 0.0
        multiplier = rules.margin_multiplier(margin)
        match_notes.append(
            reasons.NOTE_MARGIN.format(
                a=f"{dom_a:g}", b=f"{dom_b:g}", margin=f"{margin:g}", multiplier=f"{multiplier:.4g}"
            )
        )
    sides = (
        ("a", match.team_a, before_a, team_a, team_b, expected_a, outcome_a),
        ("b", match.team_b, before_b, team_b, team_a, expected_b, outcome_b),
    )
    ks: dict[str, int | float] = {}
    scores: dict[str, ScoreBreakdown] = {}
    for _, team, before, _, _, _, outcome in sides:
        for player_id, rating in zip(team, before, strict=True):
            k = rules.player_k(rating, games[player_id] or 0)
            if rules.uses_margin:
                k = k * multiplier
            ks[player_id] = k
            scores[player_id] = score_breakdown(outcome, match.stats_of(player_id), rules)
    shared: tuple[float, float] | None = None
    if rules.transfers(games[p] or 0 for p in match.players):
        shared = zero_sum_change(match, ks, scores, expected_a)
        match_notes.append(reasons.NOTE_ZERO_SUM.format(k=f"{shared[0]:.4g}", score=f"{shared[1]:.4g}"))
    gifts: dict[str, float] = {}
    if shared is None and rules.newcomer_balance != 0.0 and rules.k_new_player_games > 0:
        expected_of = {p: expected_a for p in match.team_a} | {p: expected_b for p in match.team_b}
        own_changes = {p: ks[p] * (scores[p].adjusted - expected_of[p]) for p in ks}
        players = (*match.team_a, *match.team_b)
        before_of = dict(zip(players, (*before_a, *before_b), strict=True))
        gifts = newcomer_gifts(match, rules, games, own_changes, before_of)
    changes = []
    half_up = rules.rounding == "half_up"
    for side, team, before, own, other, expected, _ in sides:
        for player_id, rating in zip(team, before, strict=True):
            k, score = ks[player_id], scores[player_id]
            k_reason = k_explained(rules, rating, games[player_id])
            notes = list(match_notes)
            if shared is not None:
                # The K actually applied is the shared one; the player's own K is in the reason.
                k_reason = reasons.K_ZERO_SUM.format(k=f"{k:.4g}", reason=k_reason)
                k = shared[0]
                change_a = shared[0] * (shared[1] - expected_a)
                moved = round_rating(change_a, half_up)
                change = change_a if side == "a" else -change_a
                after = rating + moved if side == "a" else rating - moved
            else:
                change = k * (score.adjusted - expected)
                if player_id in gifts:
                    # Gives back part of the extra change of the new players this one met.
                    notes.append(reasons.NOTE_NEWCOMER_BALANCE.format(points=f"{gifts[player_id]:.4g}"))
                    change = change - gifts[player_id]
                after = round_rating(rating + change, half_up)
            kept = clamp_rating(after, rules.rating_floor)
            if kept != after:
                if kept == rules.rating_floor:
                    notes.append(reasons.NOTE_FLOOR.format(after=after, kept=kept))
                else:
                    notes.append(
                        reasons.NOTE_RANGE.format(after=after, low=MIN_RATING, high=MAX_RATING, kept=kept)
                    )
                after = kept
            changes.append(
                PlayerChange(
                    player_id,
                    side,  # type: ignore[arg-type]
                    rating,
                    k,
                    k_reason,
                    float(own),
                    float(other),
                    expected,
                    score,
                    change,
                    after,
                    games[player_id],
                    tuple(notes),
                )
            )
    return RatingResult(match, rules.label, tuple(changes))
