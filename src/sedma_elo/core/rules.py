"""The rating rules as data: one immutable, validated object, loadable from and savable to TOML.

The default preset, :data:`REFERENCE_RULES`, holds exactly the coefficients of the game makers'
published C# method. Every other rule set is a variant of it with some values changed. Each
coefficient (TOML key, type, default, bounds, documentation, tuning range) is declared once, in
:mod:`sedma_elo.core.coefficients`; the defaults below and the validation are read from there.
The maths of K and of the score is in :mod:`sedma_elo.core.formula`, TOML in
:mod:`sedma_elo.core.rules_toml`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from ..errors import RulesError
from . import formula
from .coefficients import COEFFICIENTS, K_MODES, MAX_RATING, MIN_RATING, RELATIONS, Coefficient, by_key

__all__ = [
    "K_MODES",
    "MAX_RATING",
    "MIN_RATING",
    "REFERENCE_RULES",
    "BonusRule",
    "KTier",
    "Rules",
    "load_rules",
    "rules_from_toml",
]

Rounding = Literal["half_even", "half_up"]
Arithmetic = Literal["float32", "float64"]
TeamRating = Literal["mean", "sum"]
KMode = Literal["rating", "games", "sum", "product", "min", "max"]


@dataclass(frozen=True, slots=True)
class KTier:
    """Ratings strictly below ``below`` use ``k`` (the boundary itself belongs to the next tier)."""

    below: int
    k: int


@dataclass(frozen=True, slots=True)
class BonusRule:
    """``per_round`` points of adjusted score per counted round, at most ``cap`` in total."""

    per_round: float
    cap: float


#: The declared default of each TOML key.
_D: dict[str, Any] = {c.key: c.default for c in COEFFICIENTS}
_TIERS = tuple(KTier(below, k) for below, k in _D["k_factor.tiers"])
_BONUS = {k: BonusRule(_D[f"bonus.per_{k}"], _D[f"bonus.max_{k}"]) for k in ("16", "24", "4_and_last")}


@dataclass(frozen=True)
class Rules:
    """Every coefficient of a rating rule set. Immutable; build variants with :meth:`replace`.

    Scores are in units of a whole match result (a win is 1.0); ratings are integer Elo points.
    Construction validates every value against its declaration
    (:data:`~sedma_elo.core.coefficients.COEFFICIENTS`, which documents each one; the table of
    ``docs/rules.md`` is generated from it) and raises :class:`~sedma_elo.errors.RulesError`
    naming the key as written in TOML, e.g. ``bonus.max_16``.

    The attributes are the declarations' ``attr``: ``k_tiers`` (ascending :class:`KTier`),
    ``k_top``, ``bonus_16``/``bonus_24``/``bonus_4_and_last`` (a :class:`BonusRule` each),
    ``malus_per_bad_move``, ``malus_cap``, ``loser_bonus_scale``, ``draw_bonus_scale``,
    ``score_min``, ``score_max``, ``rounding``, ``arithmetic``, ``team_rating``, and the variants
    ``k_mode``, ``k_games_a``/``b``/``c``/``min``, ``k_new_player_games``,
    ``k_new_player_multiplier``, ``zero_sum``, ``zero_sum_established``, ``zero_sum_newcomers``,
    ``newcomer_balance``, ``newcomer_balance_games``,
    ``rating_floor``, ``margin_*``. Every variant's default leaves the reference behaviour unchanged
    (``docs/rules.md``).
    """

    name: str = _D["name"]
    version: str = _D["version"]
    initial_rating: int = _D["initial_rating"]
    k_tiers: tuple[KTier, ...] = _TIERS
    k_top: int = _D["k_factor.top"]
    bonus_16: BonusRule = _BONUS["16"]
    bonus_24: BonusRule = _BONUS["24"]
    bonus_4_and_last: BonusRule = _BONUS["4_and_last"]
    malus_per_bad_move: float = _D["malus.per_bad_move"]
    malus_cap: float = _D["malus.max"]
    loser_bonus_scale: float = _D["bonus.loser_scale"]
    draw_bonus_scale: float = _D["bonus.draw_scale"]
    score_min: float = _D["score.min"]
    score_max: float = _D["score.max"]
    rounding: Rounding = _D["rounding"]
    arithmetic: Arithmetic = _D["arithmetic"]
    team_rating: TeamRating = _D["teams.rating"]
    k_mode: KMode = _D["k_factor.mode"]
    k_games_a: float = _D["k_factor.games_a"]
    k_games_b: float = _D["k_factor.games_b"]
    k_games_c: float = _D["k_factor.games_c"]
    k_games_min: float = _D["k_factor.games_min"]
    k_new_player_games: int = _D["k_factor.new_player_games"]
    k_new_player_multiplier: float = _D["k_factor.new_player_multiplier"]
    zero_sum: bool = _D["update.zero_sum"]
    zero_sum_established: bool = _D["update.zero_sum_established"]
    zero_sum_newcomers: bool = _D["update.zero_sum_newcomers"]
    newcomer_balance: float = _D["update.newcomer_balance"]
    newcomer_balance_games: bool = _D["update.newcomer_balance_games"]
    rating_floor: int | None = _D["update.floor"]
    margin_scale: float = _D["margin.scale"]
    margin_weight_16: float = _D["margin.weight_16"]
    margin_weight_24: float = _D["margin.weight_24"]
    margin_weight_4_and_last: float = _D["margin.weight_4_and_last"]
    margin_weight_bad_moves: float = _D["margin.weight_bad_moves"]
    margin_min: float = _D["margin.min"]
    margin_max: float = _D["margin.max"]
    description: str = field(default=_D["description"], compare=False)

    def __post_init__(self) -> None:
        _validate(self)

    # ---------------------------------------------------------------- derived values (formula.py)
    k_factor = formula.k_factor
    k_reason = formula.k_reason
    k_games = formula.k_games
    player_k = formula.player_k
    dominance = formula.dominance
    margin_multiplier = formula.margin_multiplier

    @cached_property
    def tier_table(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(boundaries, ks)`` of the tiers; ``ks`` ends with ``k_top`` (see :func:`formula.k_factor`)."""
        return tuple(t.below for t in self.k_tiers), (*(t.k for t in self.k_tiers), self.k_top)

    @property
    def uses_games_played(self) -> bool:
        """True when K depends on the number of games a player played before the match."""
        return self.k_mode != "rating" or self.k_new_player_games > 0

    def transfers(self, games: Iterable[int]) -> bool:
        """True when a match whose players had ``games`` games each is rated by the zero-sum transfer.

        ``zero_sum`` makes every match a transfer; ``zero_sum_established`` only a match in which
        every player has at least ``k_new_player_games`` games (an established players' match), so
        that a newcomer's faster K still moves only the newcomer; ``zero_sum_newcomers`` also a
        match in which every player has fewer (all new: the shared K is a mean of fast K factors).
        """
        if self.zero_sum:
            return True
        counts = list(games)
        new = self.k_new_player_games
        if self.zero_sum_established and all(g >= new for g in counts):
            return True
        return self.zero_sum_newcomers and all(g < new for g in counts)

    @property
    def uses_margin(self) -> bool:
        """True when the margin-of-victory multiplier is on (``margin.scale`` is not 0)."""
        return self.margin_scale != 0.0

    @cached_property
    def label(self) -> str:
        """``name@version``, the identifier stored next to every rating."""
        return f"{self.name}@{self.version}"

    def replace(self, **changes: Any) -> Rules:
        """Return a validated copy with some values changed."""
        return replace(self, **changes)

    # ---------------------------------------------------------------- TOML (rules_toml.py)
    def to_dict(self) -> dict[str, Any]:
        """The rules as the nested mapping that :func:`rules_from_toml` reads."""
        from .rules_toml import rules_to_dict

        return rules_to_dict(self)

    def to_toml(self) -> str:
        """Serialise to TOML text that :func:`rules_from_toml` reads back to an equal object."""
        from .rules_toml import dump_toml

        return dump_toml(self.to_dict())

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_toml` to ``path`` (UTF-8)."""
        Path(path).write_text(self.to_toml(), encoding="utf-8")


# ---------------------------------------------------------------------------- validation
def value_of(rules: Rules, attr: str) -> Any:
    """The value of a declaration's ``attr`` (``bonus_16.per_round`` reads a part)."""
    head, _, tail = attr.partition(".")
    value = getattr(rules, head)
    return getattr(value, tail) if tail else value


def _fail(key: str, message: str) -> RulesError:
    return RulesError(key, message)


def _bounds(c: Coefficient, value: float) -> None:
    if c.low is not None and value < c.low:
        raise _fail(c.key, f"must be >= {c.low}, got {value}")
    if c.high is not None and value > c.high:
        raise _fail(c.key, f"must be <= {c.high}, got {value}")


def _check_text(c: Coefficient, value: object) -> None:
    if c.low is None:  # free text
        if not isinstance(value, str):
            raise _fail(c.key, "must be a string")
        return
    if not isinstance(value, str) or not value.strip():
        raise _fail(c.key, "must be a non-empty string")
    if c.high is not None and len(value) > c.high:
        raise _fail(c.key, f"must be at most {c.high:g} characters")
    # name and version label every stored rating; a control character (NUL above all) cannot be
    # stored in a PostgreSQL text column and has no business in a label.
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise _fail(c.key, "must not contain control characters")


def _check_tiers(c: Coefficient, value: object) -> None:
    if not isinstance(value, tuple):
        raise _fail(c.key, "must be a tuple of KTier")
    previous: int | None = None
    k_rule = dataclasses.replace(c, kind="int")
    for i, tier in enumerate(value):
        key = f"{c.key}[{i}]"
        if not isinstance(tier, KTier):
            raise _fail(key, "must be a KTier")
        below = dataclasses.replace(c, key=f"{key}.below", low=MIN_RATING, high=MAX_RATING, kind="int")
        _check(below, tier.below)
        _check(dataclasses.replace(k_rule, key=f"{key}.k"), tier.k)
        if previous is not None and tier.below <= previous:
            order = f"({tier.below} <= {previous})"
            raise _fail(f"{key}.below", f"tiers must be sorted by strictly increasing 'below' {order}")
        previous = tier.below


def _check(c: Coefficient, value: object) -> None:
    """Check ``value`` against declaration ``c``; raise RulesError naming ``c.key``."""
    if value is None and c.optional:
        return
    kind = c.kind
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(c.key, f"must be a number, got {type(value).__name__}")
        if not math.isfinite(value):
            raise _fail(c.key, "must be finite")
        _bounds(c, value)
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(c.key, f"must be an integer, got {type(value).__name__}")
        _bounds(c, value)
    elif kind == "bool":
        if not isinstance(value, bool):
            raise _fail(c.key, f"must be true or false, got {type(value).__name__}")
    elif kind == "choice":
        if value not in c.choices:
            raise _fail(c.key, f"must be one of {', '.join(c.choices)}, got {value!r}")
    elif kind == "text":
        _check_text(c, value)
    else:
        _check_tiers(c, value)


_COMPOUND = {
    f.name: type(f.default) for f in dataclasses.fields(Rules) if dataclasses.is_dataclass(f.default)
}


def _validate(r: Rules) -> None:
    for c in COEFFICIENTS:
        head = c.attr.partition(".")[0]
        if head in _COMPOUND and not isinstance(getattr(r, head), _COMPOUND[head]):
            raise _fail(c.key, f"must be a {_COMPOUND[head].__name__}")
        _check(c, value_of(r, c.attr))
    for rel in RELATIONS:
        low = value_of(r, by_key(rel.low_key).attr)
        high = value_of(r, by_key(rel.high_key).attr)
        if low is None or high is None:
            continue
        if (low >= high) if rel.strict else (low > high):
            if rel.field == rel.high_key:
                word, sign = ("greater than", "<=") if rel.strict else (">=", "<")
                raise _fail(rel.field, f"must be {word} {rel.low_key} ({high} {sign} {low})")
            word, sign = ("less than", ">=") if rel.strict else ("<=", ">")
            raise _fail(rel.field, f"must be {word} {rel.high_key} ({low} {sign} {high})")


#: The published rules: the default preset, identical to the C# method.
REFERENCE_RULES: Rules = Rules(
    description="The coefficients of the game makers' published C# method CalculateNewRatings."
)

from .rules_toml import load_rules, rules_from_toml  # noqa: E402  (re-exported: the public API)
