"""The rating rules as data: one immutable, validated object, loadable from and savable to TOML.

The default preset, :data:`REFERENCE_RULES`, holds exactly the coefficients of the game makers'
published C# method. Every other rule set is a variant of it with some values changed.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from ..errors import RulesError

__all__ = [
    "MAX_RATING",
    "MIN_RATING",
    "REFERENCE_RULES",
    "BonusRule",
    "KTier",
    "Rules",
    "load_rules",
    "rules_from_toml",
]

#: Ratings outside this range are refused: it keeps 10^(difference/400) finite in double precision
#: and every C# int subtraction free of overflow.
MIN_RATING = -50_000
MAX_RATING = 50_000

Rounding = Literal["half_even", "half_up"]
Arithmetic = Literal["float32", "float64"]
TeamRating = Literal["mean", "sum"]
KMode = Literal["rating", "games", "sum", "product", "min", "max"]
_ROUNDINGS = ("half_even", "half_up")
_ARITHMETICS = ("float32", "float64")
_TEAM_RATINGS = ("mean", "sum")
#: ``k_factor.mode``: how the K of the rating tiers and the K of games played are combined.
K_MODES: tuple[KMode, ...] = ("rating", "games", "sum", "product", "min", "max")


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


@dataclass(frozen=True)
class Rules:
    """Every coefficient of a rating rule set. Immutable; build variants with :meth:`replace`.

    Scores are in units of a whole match result (a win is 1.0); ratings are integer Elo points.
    Construction validates every value and raises :class:`~sedma_elo.errors.RulesError` naming the
    key (as written in TOML, e.g. ``bonus.max_16``).

    Attributes:
        name, version: identify the rule set; every stored rating records them.
        initial_rating: rating of a player on first sight.
        k_tiers: ascending tiers; a rating below ``tiers[i].below`` (and not below an earlier one)
            uses ``tiers[i].k``; ratings at or above the last boundary use ``k_top``.
        bonus_16, bonus_24, bonus_4_and_last: per-round bonus and cap for rounds won as a 16er,
            a 24er and with "4 and last".
        malus_per_bad_move, malus_cap: the malus per bad move and its cap (subtracted from score).
        loser_bonus_scale: the share of their bonuses a losing player keeps (0.1 in the post).
        draw_bonus_scale: the share of their bonuses each player keeps on a draw. The default
            0.55 is the mean of the winner's 1.0 and the loser's 0.1: a draw is half a win and
            half a loss.
        score_min, score_max: the adjusted score is clamped to this interval.
        rounding: ``half_even`` (C# ``Math.Round``, the reference) or ``half_up``.
        arithmetic: ``float32`` computes bonus, malus and the clamp in IEEE single precision
            exactly like the C# method; ``float64`` in double precision.
        team_rating: how a team's rating is formed for the expected score: ``mean`` of its
            members (default) or ``sum``.

    Variants (every default leaves the reference behaviour unchanged; ``docs/rules.md``):
        k_mode: ``rating`` (the tiers alone, the reference), ``games`` (the games-played curve
            alone), or ``sum``, ``product``, ``min``, ``max`` of the tier K and the curve.
        k_games_a, k_games_b, k_games_c, k_games_min: the games-played curve
            ``max(a / (games + b) ** c, min)`` (FiveThirtyEight's tennis Elo uses 250, 5, 0.4).
        k_new_player_games, k_new_player_multiplier: K is multiplied by the multiplier while a
            player has played fewer than ``k_new_player_games`` games (0 = off).
        zero_sum: both players move by the same whole number of points in opposite directions,
            so ratings are only moved between players (see :func:`sedma_elo.core.engine.rate`).
        rating_floor: no update leaves a rating below this (None = no floor).
        margin_scale, margin_weight_*, margin_min, margin_max: margin of victory; both players'
            K is multiplied by ``clamp(1 + scale * (D_winner - D_loser), min, max)`` where a side's
            dominance ``D`` weighs its 16ers, 24ers, 4-and-last wins and bad moves (0 = off).
    """

    name: str = "reference"
    version: str = "1.0"
    initial_rating: int = 1000
    k_tiers: tuple[KTier, ...] = (KTier(1200, 40), KTier(1800, 32), KTier(2200, 24))
    k_top: int = 16
    bonus_16: BonusRule = BonusRule(0.05, 0.15)
    bonus_24: BonusRule = BonusRule(0.1, 0.2)
    bonus_4_and_last: BonusRule = BonusRule(0.03, 0.09)
    malus_per_bad_move: float = 0.02
    malus_cap: float = 0.3
    loser_bonus_scale: float = 0.1
    draw_bonus_scale: float = 0.55
    score_min: float = 0.0
    score_max: float = 1.0
    rounding: Rounding = "half_even"
    arithmetic: Arithmetic = "float32"
    team_rating: TeamRating = "mean"
    k_mode: KMode = "rating"
    k_games_a: float = 250.0
    k_games_b: float = 5.0
    k_games_c: float = 0.4
    k_games_min: float = 0.0
    k_new_player_games: int = 0
    k_new_player_multiplier: float = 1.0
    zero_sum: bool = False
    rating_floor: int | None = None
    margin_scale: float = 0.0
    margin_weight_16: float = 1.0
    margin_weight_24: float = 2.0
    margin_weight_4_and_last: float = -1.0
    margin_weight_bad_moves: float = 0.0
    margin_min: float = 0.0
    margin_max: float = 3.0
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _validate(self)

    # ---------------------------------------------------------------- derived values
    def k_factor(self, rating: int) -> int:
        """K for a player currently rated ``rating`` (the tier boundary belongs to the higher tier)."""
        for tier in self.k_tiers:
            if rating < tier.below:
                return tier.k
        return self.k_top

    def k_reason(self, rating: int) -> str:
        """A short sentence saying why :meth:`k_factor` chose its K."""
        previous: int | None = None
        for tier in self.k_tiers:
            if rating < tier.below:
                if previous is None:
                    return f"rating {rating} is below {tier.below}"
                return f"rating {rating} is in [{previous}, {tier.below})"
            previous = tier.below
        if previous is None:
            return "a single K for every rating"
        return f"rating {rating} is at or above {previous}"

    @property
    def uses_games_played(self) -> bool:
        """True when K depends on the number of games a player played before the match."""
        return self.k_mode != "rating" or self.k_new_player_games > 0

    @property
    def uses_margin(self) -> bool:
        """True when the margin-of-victory multiplier is on (``margin.scale`` is not 0)."""
        return self.margin_scale != 0.0

    def k_games(self, games: int) -> float:
        """The games-played curve ``max(a / (games + b) ** c, k_games_min)`` (double precision)."""
        value = self.k_games_a / math.pow(games + self.k_games_b, self.k_games_c)
        return value if value > self.k_games_min else self.k_games_min

    def player_k(self, rating: int, games: int) -> int | float:
        """K of a player rated ``rating`` who played ``games`` games before this match.

        The margin-of-victory multiplier is not included (it depends on the match). In the
        reference mode (``rating``, no new-player multiplier) this is the int :meth:`k_factor`.
        The operations and their order are the batch kernel's; change both together.
        """
        k: int | float = self.k_factor(rating)
        mode = self.k_mode
        if mode != "rating":
            g = self.k_games(games)
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
        if games < self.k_new_player_games:
            k = k * self.k_new_player_multiplier
        return k

    def dominance(self, bad_moves: int, won_by_16: int, won_by_24: int, won_by_4_and_last: int) -> float:
        """A side's margin-of-victory weight of its counts (double precision, this order)."""
        return (
            self.margin_weight_16 * won_by_16
            + self.margin_weight_24 * won_by_24
            + self.margin_weight_4_and_last * won_by_4_and_last
            + self.margin_weight_bad_moves * bad_moves
        )

    def margin_multiplier(self, margin: float) -> float:
        """``clamp(1 + margin_scale * margin, margin_min, margin_max)`` for ``margin = D_win - D_lose``."""
        value = 1.0 + self.margin_scale * margin
        if value < self.margin_min:
            return self.margin_min
        if value > self.margin_max:
            return self.margin_max
        return value

    @cached_property
    def label(self) -> str:
        """``name@version``, the identifier stored next to every rating."""
        return f"{self.name}@{self.version}"

    def replace(self, **changes: Any) -> Rules:
        """Return a validated copy with some values changed."""
        return replace(self, **changes)

    # ---------------------------------------------------------------- TOML
    def to_dict(self) -> dict[str, Any]:
        """The rules as the nested mapping that :func:`rules_from_toml` reads."""
        return {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "initial_rating": self.initial_rating,
            "rounding": self.rounding,
            "arithmetic": self.arithmetic,
            "k_factor": {
                "mode": self.k_mode,
                "tiers": [{"below": t.below, "k": t.k} for t in self.k_tiers],
                "top": self.k_top,
                "games_a": self.k_games_a,
                "games_b": self.k_games_b,
                "games_c": self.k_games_c,
                "games_min": self.k_games_min,
                "new_player_games": self.k_new_player_games,
                "new_player_multiplier": self.k_new_player_multiplier,
            },
            "bonus": {
                "per_16": self.bonus_16.per_round,
                "max_16": self.bonus_16.cap,
                "per_24": self.bonus_24.per_round,
                "max_24": self.bonus_24.cap,
                "per_4_and_last": self.bonus_4_and_last.per_round,
                "max_4_and_last": self.bonus_4_and_last.cap,
                "loser_scale": self.loser_bonus_scale,
                "draw_scale": self.draw_bonus_scale,
            },
            "malus": {"per_bad_move": self.malus_per_bad_move, "max": self.malus_cap},
            "score": {"min": self.score_min, "max": self.score_max},
            "teams": {"rating": self.team_rating},
            "update": {"zero_sum": self.zero_sum}
            | ({} if self.rating_floor is None else {"floor": self.rating_floor}),
            "margin": {
                "scale": self.margin_scale,
                "weight_16": self.margin_weight_16,
                "weight_24": self.margin_weight_24,
                "weight_4_and_last": self.margin_weight_4_and_last,
                "weight_bad_moves": self.margin_weight_bad_moves,
                "min": self.margin_min,
                "max": self.margin_max,
            },
        }

    def to_toml(self) -> str:
        """Serialise to TOML text that :func:`rules_from_toml` reads back to an equal object."""
        return _dump_toml(self.to_dict())

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_toml` to ``path`` (UTF-8)."""
        Path(path).write_text(self.to_toml(), encoding="utf-8")


# ---------------------------------------------------------------------------- validation
def _fail(key: str, message: str) -> RulesError:
    return RulesError(key, message)


def _check_number(key: str, value: object, *, low: float | None = None, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(key, f"must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise _fail(key, "must be finite")
    if low is not None and value < low:
        raise _fail(key, f"must be >= {low}, got {value}")
    if high is not None and value > high:
        raise _fail(key, f"must be <= {high}, got {value}")
    return float(value)


def _check_int(key: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(key, f"must be an integer, got {type(value).__name__}")
    if low is not None and value < low:
        raise _fail(key, f"must be >= {low}, got {value}")
    if high is not None and value > high:
        raise _fail(key, f"must be <= {high}, got {value}")
    return value


def _check_text(key: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, "must be a non-empty string")
    if len(value) > 100:
        raise _fail(key, "must be at most 100 characters")
    # name and version label every stored rating; a control character (NUL above all) cannot be
    # stored in a PostgreSQL text column and has no business in a label.
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise _fail(key, "must not contain control characters")


def _validate(r: Rules) -> None:
    _check_text("name", r.name)
    _check_text("version", r.version)
    if not isinstance(r.description, str):
        raise _fail("description", "must be a string")
    _check_int("initial_rating", r.initial_rating, low=MIN_RATING, high=MAX_RATING)
    if not isinstance(r.k_tiers, tuple):
        raise _fail("k_factor.tiers", "must be a tuple of KTier")
    previous: int | None = None
    for i, tier in enumerate(r.k_tiers):
        key = f"k_factor.tiers[{i}]"
        if not isinstance(tier, KTier):
            raise _fail(key, "must be a KTier")
        _check_int(f"{key}.below", tier.below, low=MIN_RATING, high=MAX_RATING)
        _check_int(f"{key}.k", tier.k, low=0, high=1000)
        if previous is not None and tier.below <= previous:
            raise _fail(
                f"{key}.below",
                f"tiers must be sorted by strictly increasing 'below' ({tier.below} <= {previous})",
            )
        previous = tier.below
    _check_int("k_factor.top", r.k_top, low=0, high=1000)
    for key, bonus in (("16", r.bonus_16), ("24", r.bonus_24), ("4_and_last", r.bonus_4_and_last)):
        if not isinstance(bonus, BonusRule):
            raise _fail(f"bonus.per_{key}", "must be a BonusRule")
        _check_number(f"bonus.per_{key}", bonus.per_round, low=0.0, high=1.0)
        _check_number(f"bonus.max_{key}", bonus.cap, low=0.0, high=1.0)
    _check_number("bonus.loser_scale", r.loser_bonus_scale, low=0.0, high=1.0)
    _check_number("bonus.draw_scale", r.draw_bonus_scale, low=0.0, high=1.0)
    _check_number("malus.per_bad_move", r.malus_per_bad_move, low=0.0, high=1.0)
    _check_number("malus.max", r.malus_cap, low=0.0, high=1.0)
    _check_number("score.min", r.score_min, low=-1.0, high=2.0)
    _check_number("score.max", r.score_max, low=-1.0, high=2.0)
    if r.score_min >= r.score_max:
        raise _fail("score.max", f"must be greater than score.min ({r.score_max} <= {r.score_min})")
    if r.rounding not in _ROUNDINGS:
        raise _fail("rounding", f"must be one of {', '.join(_ROUNDINGS)}, got {r.rounding!r}")
    if r.arithmetic not in _ARITHMETICS:
        raise _fail("arithmetic", f"must be one of {', '.join(_ARITHMETICS)}, got {r.arithmetic!r}")
    if r.team_rating not in _TEAM_RATINGS:
        raise _fail("teams.rating", f"must be one of {', '.join(_TEAM_RATINGS)}, got {r.team_rating!r}")
    _validate_variants(r)


def _validate_variants(r: Rules) -> None:
    if r.k_mode not in K_MODES:
        raise _fail("k_factor.mode", f"must be one of {', '.join(K_MODES)}, got {r.k_mode!r}")
    _check_number("k_factor.games_a", r.k_games_a, low=0.0, high=100_000.0)
    # b > 0 keeps (games + b) positive for a new player; the exponent bounds keep pow finite.
    _check_number("k_factor.games_b", r.k_games_b, low=0.001, high=100_000.0)
    _check_number("k_factor.games_c", r.k_games_c, low=0.0, high=5.0)
    _check_number("k_factor.games_min", r.k_games_min, low=0.0, high=1000.0)
    _check_int("k_factor.new_player_games", r.k_new_player_games, low=0, high=1_000_000)
    _check_number("k_factor.new_player_multiplier", r.k_new_player_multiplier, low=0.0, high=100.0)
    if not isinstance(r.zero_sum, bool):
        raise _fail("update.zero_sum", f"must be true or false, got {type(r.zero_sum).__name__}")
    if r.rating_floor is not None:
        _check_int("update.floor", r.rating_floor, low=MIN_RATING, high=MAX_RATING)
        if r.rating_floor > r.initial_rating:
            raise _fail("update.floor", f"must be <= initial_rating ({r.rating_floor} > {r.initial_rating})")
    _check_number("margin.scale", r.margin_scale, low=-10.0, high=10.0)
    for key in ("16", "24", "4_and_last", "bad_moves"):
        _check_number(f"margin.weight_{key}", getattr(r, f"margin_weight_{key}"), low=-100.0, high=100.0)
    _check_number("margin.min", r.margin_min, low=0.0, high=100.0)
    _check_number("margin.max", r.margin_max, low=0.0, high=100.0)
    if r.margin_min > r.margin_max:
        raise _fail("margin.max", f"must be >= margin.min ({r.margin_max} < {r.margin_min})")


# ---------------------------------------------------------------------------- TOML reading
_TABLES: dict[str, tuple[str, ...]] = {
    "k_factor": (
        "mode",
        "tiers",
        "top",
        "games_a",
        "games_b",
        "games_c",
        "games_min",
        "new_player_games",
        "new_player_multiplier",
    ),
    "bonus": (
        "per_16",
        "max_16",
        "per_24",
        "max_24",
        "per_4_and_last",
        "max_4_and_last",
        "loser_scale",
        "draw_scale",
    ),
    "malus": ("per_bad_move", "max"),
    "score": ("min", "max"),
    "teams": ("rating",),
    "update": ("zero_sum", "floor"),
    "margin": ("scale", "weight_16", "weight_24", "weight_4_and_last", "weight_bad_moves", "min", "max"),
}
# TOML key -> Rules attribute, for the keys read as they are.
_SIMPLE_KEYS: dict[tuple[str, str], str] = {
    ("k_factor", "mode"): "k_mode",
    ("k_factor", "top"): "k_top",
    ("k_factor", "games_a"): "k_games_a",
    ("k_factor", "games_b"): "k_games_b",
    ("k_factor", "games_c"): "k_games_c",
    ("k_factor", "games_min"): "k_games_min",
    ("k_factor", "new_player_games"): "k_new_player_games",
    ("k_factor", "new_player_multiplier"): "k_new_player_multiplier",
    ("bonus", "loser_scale"): "loser_bonus_scale",
    ("bonus", "draw_scale"): "draw_bonus_scale",
    ("malus", "per_bad_move"): "malus_per_bad_move",
    ("malus", "max"): "malus_cap",
    ("score", "min"): "score_min",
    ("score", "max"): "score_max",
    ("teams", "rating"): "team_rating",
    ("update", "zero_sum"): "zero_sum",
    ("update", "floor"): "rating_floor",
    ("margin", "scale"): "margin_scale",
    ("margin", "weight_16"): "margin_weight_16",
    ("margin", "weight_24"): "margin_weight_24",
    ("margin", "weight_4_and_last"): "margin_weight_4_and_last",
    ("margin", "weight_bad_moves"): "margin_weight_bad_moves",
    ("margin", "min"): "margin_min",
    ("margin", "max"): "margin_max",
}
_TOP_KEYS = ("name", "version", "description", "initial_rating", "rounding", "arithmetic")


def rules_from_mapping(data: Mapping[str, Any]) -> Rules:
    """Build rules from the nested mapping of a TOML file; missing keys keep the reference value.

    Raises:
        RulesError: an unknown key, a value of the wrong type or out of range (the key is named).
    """
    if not isinstance(data, Mapping):
        raise _fail("(root)", "must be a table")
    for key, value in data.items():
        if key in _TABLES:
            if not isinstance(value, Mapping):
                raise _fail(key, "must be a table")
            for sub in value:
                if sub not in _TABLES[key]:
                    raise _fail(f"{key}.{sub}", f"unknown key (allowed: {', '.join(_TABLES[key])})")
        elif key not in _TOP_KEYS:
            raise _fail(key, f"unknown key (allowed: {', '.join(_TOP_KEYS + tuple(_TABLES))})")

    base = REFERENCE_RULES
    changes: dict[str, Any] = {k: data[k] for k in _TOP_KEYS if k in data}
    if "description" not in data:
        changes["description"] = ""
    kf = data.get("k_factor", {})
    if "tiers" in kf:
        changes["k_tiers"] = _read_tiers(kf["tiers"])
    for (table, key), attr in _SIMPLE_KEYS.items():
        if key in data.get(table, {}):
            changes[attr] = data[table][key]
    bonus = data.get("bonus", {})
    for suffix, attr in (("16", "bonus_16"), ("24", "bonus_24"), ("4_and_last", "bonus_4_and_last")):
        old: BonusRule = getattr(base, attr)
        per = bonus.get(f"per_{suffix}", old.per_round)
        cap = bonus.get(f"max_{suffix}", old.cap)
        changes[attr] = BonusRule(per, cap)
    # Integers written without a decimal point in TOML are fine for float fields.
    return replace(base, **changes)


def _read_tiers(raw: object) -> tuple[KTier, ...]:
    if not isinstance(raw, list):
        raise _fail("k_factor.tiers", "must be an array of tables {below = ..., k = ...}")
    tiers = []
    for i, item in enumerate(raw):
        key = f"k_factor.tiers[{i}]"
        if not isinstance(item, Mapping):
            raise _fail(key, "must be a table {below = ..., k = ...}")
        for sub in item:
            if sub not in ("below", "k"):
                raise _fail(f"{key}.{sub}", "unknown key (allowed: below, k)")
        for sub in ("below", "k"):
            if sub not in item:
                raise _fail(f"{key}.{sub}", "is required")
        tiers.append(KTier(item["below"], item["k"]))
    return tuple(tiers)


def rules_from_toml(text: str) -> Rules:
    """Parse TOML text into validated rules.

    Raises:
        RulesError: the text is not TOML, or a key is unknown, mistyped or out of range.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail("(toml)", f"not valid TOML: {exc}") from exc
    return rules_from_mapping(data)


def load_rules(path: str | Path | None) -> Rules:
    """Load rules from a TOML file; ``None`` means :data:`REFERENCE_RULES`.

    Raises:
        RulesError: the file cannot be read or is invalid (the message names the file and key).
    """
    if path is None:
        return REFERENCE_RULES
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise _fail("(file)", f"cannot read {path}: {exc.strerror}") from exc
    return rules_from_toml(text)


# ---------------------------------------------------------------------------- TOML writing
_TOML_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n"}


def _toml_char(c: str) -> str:
    # TOML basic strings allow no control character but tab: write the others as \uXXXX.
    if c in _TOML_ESCAPES:
        return _TOML_ESCAPES[c]
    if (c < " " and c != "\t") or c == "\x7f":
        return f"\\u{ord(c):04x}"
    return c


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same double
    if isinstance(value, str):
        escaped = "".join(_toml_char(c) for c in value)
        return f'"{escaped}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _dump_toml(data: Mapping[str, Any]) -> str:
    lines = []
    tables = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    for key, table in tables:
        lines.append("")
        lines.append(f"[{key}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


#: The published rules: the default preset, identical to the C# method.
REFERENCE_RULES = Rules(
    description="The coefficients of the game makers' published C# method CalculateNewRatings."
)
