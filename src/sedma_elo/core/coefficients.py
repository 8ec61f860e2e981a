"""Every coefficient of a rule set, declared once.

Each :class:`Coefficient` says the coefficient's TOML key, its :class:`~sedma_elo.core.rules.Rules`
attribute, its type, default, bounds, one line of documentation, its tuning range and where the
batch kernel reads it. Everything else is derived from :data:`COEFFICIENTS`: the validation of
``Rules``, TOML reading and writing (:mod:`sedma_elo.core.rules_toml`), the comments of
``rules init``, ``rules show``, the rules table of ``docs/rules.md`` (``scripts/gen_rules_doc.py``),
the tuning search space (:func:`search_space`) and the kernel's parameter layout
(:mod:`sedma_elo.batch.kernel`).

Adding a coefficient: one entry here (and, if it is a new ``Rules`` field, the field), its maths
in :mod:`sedma_elo.core.formula` or the engine and in the numba kernel, and tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "COEFFICIENTS",
    "K_MODES",
    "MAX_RATING",
    "MIN_RATING",
    "RELATIONS",
    "TABLES",
    "TABLE_DOCS",
    "TIER_TUNING",
    "Coefficient",
    "Relation",
    "SearchParam",
    "TierTuning",
    "Tune",
    "by_key",
    "search_space",
]

#: Ratings outside this range are refused as input, and every update is clamped into it, so
#: that a rule set can never push a rating where later matches would be refused. The range keeps
#: every C# int subtraction free of overflow; see ``docs/rules.md`` for the expected score of
#: team sums beyond it.
MIN_RATING = -50_000
MAX_RATING = 50_000

#: ``k_factor.mode``: how the K of the rating tiers and the K of games played are combined.
K_MODES = ("rating", "games", "sum", "product", "min", "max")

Kind = Literal["text", "int", "float", "bool", "choice", "tiers"]
#: Where the numba kernel reads a coefficient: ``score`` (float32 and float64 arrays, the score
#: maths), ``float`` (float64 array), ``int`` (int64 array; a choice as its index, a bool as 0/1),
#: ``games`` (the games-played curve), ``tiers`` (the tier arrays), or ``None`` (not read).
KernelSlot = Literal["score", "float", "int", "games", "tiers"] | None


@dataclass(frozen=True, slots=True)
class Tune:
    """A tuning range: ``[low, high]`` (log scale, integers) or, for a choice, the ``choices`` searched."""

    low: float = 0.0
    high: float = 0.0
    log: bool = False
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Coefficient:
    """One coefficient of a rule set.

    Attributes:
        key: the dotted TOML key (``bonus.per_16``); also the field of a ``RulesError``.
        attr: the ``Rules`` attribute; ``bonus_16.per_round`` for a part of a compound value.
        kind: ``text``, ``int``, ``float``, ``bool``, ``choice`` or ``tiers``.
        default: the reference value (the published C# method's).
        doc: one line for the docs, ``rules init`` and ``rules show``.
        low, high: inclusive bounds of a number (``None``: unbounded); of a label's length for a
            text (``None``: free text, may be empty).
        choices: the allowed values of a choice.
        optional: ``None`` is allowed and means "off" (not written to TOML).
        tune: the tuning range, ``None`` when the coefficient is not searched.
        kernel: where the batch kernel reads it (see :data:`KernelSlot`).
        kernel_none: the kernel's value for ``None`` (an optional coefficient).
    """

    key: str
    attr: str
    kind: Kind
    default: object
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    tune: Tune | None = None
    kernel: KernelSlot = None
    kernel_none: int = 0

    @property
    def table(self) -> str:
        """The TOML table holding the key ("" for a top-level key)."""
        return self.key.rpartition(".")[0]

    @property
    def name(self) -> str:
        """The key inside its table."""
        return self.key.rpartition(".")[2]


@dataclass(frozen=True, slots=True)
class Relation:
    """A check between two coefficients: ``low_key`` ``<`` (or ``<=``) ``high_key``; ``field`` is refused."""

    low_key: str
    high_key: str
    strict: bool
    field: str


@dataclass(frozen=True, slots=True)
class TierTuning:
    """How the tuner searches ``k_factor.tiers`` (three tiers): K of each, then the boundaries.

    The first boundary is ``initial_rating + offset``; each next one ``width`` above the last.
    """

    k: tuple[tuple[int, int], ...] = ((16, 80), (12, 64), (8, 48))
    offset: tuple[int, int] = (-200, 400)
    width: tuple[int, int] = (50, 800)


_R = (MIN_RATING, MAX_RATING)
_SHARE = (0.0, 1.0)

COEFFICIENTS: tuple[Coefficient, ...] = (
    Coefficient("name", "name", "text", "reference", "names the rule set (stored with every rating)", 1, 100),
    Coefficient("version", "version", "text", "1.0", "version of the rule set (stored too)", 1, 100),
    Coefficient("description", "description", "text", "", "free text (not part of equality)"),
    Coefficient(
        "initial_rating", "initial_rating", "int", 1000, "rating of a player on first sight", *_R,
        tune=Tune(1000, 1500),
    ),
    Coefficient(
        "rounding", "rounding", "choice", "half_even",
        "how the new rating (or zero-sum transfer) is rounded: half_even is C#'s Math.Round",
        choices=("half_even", "half_up"), kernel="int",
    ),
    Coefficient(
        "arithmetic", "arithmetic", "choice", "float32",
        "precision of bonus, malus and clamp: float32 is exactly the C# method's",
        choices=("float32", "float64"), kernel="int",
    ),
    Coefficient(
        "k_factor.mode", "k_mode", "choice", "rating", "how K by rating and K by games played combine",
        choices=K_MODES, tune=Tune(choices=("rating", "games", "min", "max")), kernel="int",
    ),
    Coefficient(
        "k_factor.tiers", "k_tiers", "tiers", ((1200, 40), (1800, 32), (2200, 24)),
        "K by rating: a rating below `below` (and not below an earlier one) uses `k`",
        0, 1000, kernel="tiers",
    ),
    Coefficient(
        "k_factor.top", "k_top", "int", 16, "K at or above the last tier boundary", 0, 1000,
        tune=Tune(4, 40), kernel="tiers",
    ),
    Coefficient(
        "k_factor.games_a", "k_games_a", "float", 250.0, "games curve numerator a: K = a / (games + b)^c",
        0.0, 100_000.0, tune=Tune(50.0, 800.0, log=True), kernel="games",
    ),
    Coefficient(
        "k_factor.games_b", "k_games_b", "float", 5.0, "games curve offset b (> 0: K is finite)",
        0.001, 100_000.0, tune=Tune(1.0, 50.0, log=True), kernel="games",
    ),
    Coefficient(
        "k_factor.games_c", "k_games_c", "float", 0.4, "games curve exponent c", 0.0, 5.0,
        tune=Tune(0.1, 0.8), kernel="games",
    ),
    Coefficient(
        "k_factor.games_min", "k_games_min", "float", 0.0, "floor of the games curve", 0.0, 1000.0,
        tune=Tune(0.0, 30.0), kernel="games",
    ),
    Coefficient(
        "k_factor.new_player_games", "k_new_player_games", "int", 0,
        "games below which a player counts as new (0 = off)", 0, 1_000_000, tune=Tune(0, 30), kernel="int",
    ),
    Coefficient(
        "k_factor.new_player_multiplier", "k_new_player_multiplier", "float", 1.0,
        "K multiplier for a new player", 0.0, 100.0, tune=Tune(1.0, 3.0), kernel="float",
    ),
    Coefficient(
        "bonus.per_16", "bonus_16.per_round", "float", 0.05, "score per round won as a 16er (all 8 points)",
        *_SHARE, tune=Tune(0.0, 0.2), kernel="score",
    ),
    Coefficient(
        "bonus.max_16", "bonus_16.cap", "float", 0.15, "cap of the 16er bonus", *_SHARE,
        tune=Tune(0.0, 0.5), kernel="score",
    ),
    Coefficient(
        "bonus.per_24", "bonus_24.per_round", "float", 0.1, "score per round won as a 24er (every trick)",
        *_SHARE, tune=Tune(0.0, 0.3), kernel="score",
    ),
    Coefficient(
        "bonus.max_24", "bonus_24.cap", "float", 0.2, "cap of the 24er bonus", *_SHARE,
        tune=Tune(0.0, 0.5), kernel="score",
    ),
    Coefficient(
        "bonus.per_4_and_last", "bonus_4_and_last.per_round", "float", 0.03,
        "score per round won with 4 and last (4:4 on points, last trick)", *_SHARE,
        tune=Tune(0.0, 0.1), kernel="score",
    ),
    Coefficient(
        "bonus.max_4_and_last", "bonus_4_and_last.cap", "float", 0.09, "cap of the 4-and-last bonus",
        *_SHARE, tune=Tune(0.0, 0.5), kernel="score",
    ),
    Coefficient(
        "bonus.loser_scale", "loser_bonus_scale", "float", 0.1, "share of their bonuses a loser keeps",
        *_SHARE, tune=Tune(0.0, 1.0), kernel="score",
    ),
    Coefficient(
        "bonus.draw_scale", "draw_bonus_scale", "float", 0.55,
        "share of their bonuses each player keeps on a draw", *_SHARE, kernel="score",
    ),
    Coefficient(
        "malus.per_bad_move", "malus_per_bad_move", "float", 0.02, "score lost per bad move", *_SHARE,
        tune=Tune(0.0, 0.03), kernel="score",
    ),
    Coefficient(
        "malus.max", "malus_cap", "float", 0.3, "cap of the malus", *_SHARE,
        tune=Tune(0.0, 0.3), kernel="score",
    ),
    Coefficient(
        "score.min", "score_min", "float", 0.0, "lower clamp of the adjusted score", -1.0, 2.0,
        kernel="score",
    ),
    Coefficient(
        "score.max", "score_max", "float", 1.0,
        "upper clamp of the adjusted score (> 1: a dominant win counts more)", -1.0, 2.0,
        tune=Tune(1.0, 1.5), kernel="score",
    ),
    Coefficient(
        "teams.rating", "team_rating", "choice", "mean",
        "a team's rating for the expected score: the mean or the sum of its players'",
        choices=("mean", "sum"),
    ),
    Coefficient(
        "update.zero_sum", "zero_sum", "bool", False,
        "move points between players (one shared transfer) instead of creating them", kernel="int",
    ),
    Coefficient(
        "update.zero_sum_established", "zero_sum_established", "bool", False,
        "the zero-sum transfer only when every player has k_factor.new_player_games games or more",
        kernel="int",
    ),
    Coefficient(
        "update.zero_sum_newcomers", "zero_sum_newcomers", "bool", False,
        "the zero-sum transfer also when every player has fewer than k_factor.new_player_games games",
        kernel="int",
    ),
    Coefficient(
        "update.newcomer_balance", "newcomer_balance", "float", 0.0,
        "share of a new player's extra change (the new-player multiplier's part) that their opponents"
        " give back, outside the zero-sum transfer (1: the multiplier creates no points)",
        *_SHARE, tune=Tune(0.0, 1.0), kernel="float",
    ),
    Coefficient(
        "update.newcomer_balance_games", "newcomer_balance_games", "bool", False,
        "newcomer_balance also covers the games curve: a new player's extra change is measured against"
        " their K at k_factor.new_player_games games, not only the multiplier's part",
        kernel="int",
    ),
    Coefficient(
        "update.floor", "rating_floor", "int", None, "lowest rating an update can leave (none: no floor)",
        *_R, optional=True, kernel="int", kernel_none=MIN_RATING,
    ),
    Coefficient(
        "margin.scale", "margin_scale", "float", 0.0, "margin-of-victory strength (0 = off)", -10.0, 10.0,
        tune=Tune(0.0, 0.3), kernel="float",
    ),
    Coefficient(
        "margin.weight_16", "margin_weight_16", "float", 1.0, "dominance weight of a 16er", -100.0, 100.0,
        tune=Tune(0.0, 2.0), kernel="float",
    ),
    Coefficient(
        "margin.weight_24", "margin_weight_24", "float", 2.0, "dominance weight of a 24er", -100.0, 100.0,
        tune=Tune(0.0, 3.0), kernel="float",
    ),
    Coefficient(
        "margin.weight_4_and_last", "margin_weight_4_and_last", "float", -1.0,
        "dominance weight of a 4-and-last win (a close match)", -100.0, 100.0,
        tune=Tune(-2.0, 1.0), kernel="float",
    ),
    Coefficient(
        "margin.weight_bad_moves", "margin_weight_bad_moves", "float", 0.0, "dominance weight of a bad move",
        -100.0, 100.0, tune=Tune(-0.5, 0.5), kernel="float",
    ),
    Coefficient(
        "margin.min", "margin_min", "float", 0.0, "lower clamp of the margin multiplier", 0.0, 100.0,
        kernel="float",
    ),
    Coefficient(
        "margin.max", "margin_max", "float", 3.0, "upper clamp of the margin multiplier", 0.0, 100.0,
        tune=Tune(1.0, 3.0), kernel="float",
    ),
)  # fmt: skip

#: Checks between coefficients, run after each coefficient's own check.
RELATIONS: tuple[Relation, ...] = (
    Relation("score.min", "score.max", True, "score.max"),
    Relation("update.floor", "initial_rating", False, "update.floor"),
    Relation("margin.min", "margin.max", False, "margin.max"),
)

#: One paragraph per TOML table, for ``rules init`` and the docs.
TABLE_DOCS: Mapping[str, str] = {
    "k_factor": "K: how far one match can move a rating. A rating below tiers[i].below (and not below an "
    "earlier boundary) uses tiers[i].k; a boundary belongs to the higher tier. Ratings at or above the last "
    "boundary use top. Tiers must be sorted by 'below'. mode combines this K with K by games played.",
    "bonus": "Bonus per round won as a 16er (all 8 points), as a 24er (every trick) and with 4 and last "
    "(4:4 on points, last trick), each capped at its max_*. A losing player keeps loser_scale of their "
    "bonus; on a draw each player keeps draw_scale of theirs.",
    "malus": "Each bad move subtracts per_bad_move from the score, at most max in total.",
    "score": "base + bonus - malus is clamped to [min, max] (the adjusted score).",
    "teams": "Two against two: each player is updated with their own K and statistics; the expected score "
    "compares the teams' ratings.",
    "update": "Variants of the update itself. Every new rating is also kept in "
    f"[{MIN_RATING}, {MAX_RATING}].",
    "margin": "Margin of victory: both players' K is multiplied by clamp(1 + scale * (D_winner - D_loser), "
    "min, max), where a side's dominance D weighs its counts.",
}

#: How the tuner searches the tiers (their K bounds reuse ``k_factor.tiers``' declaration).
TIER_TUNING = TierTuning()

_BY_KEY = {c.key: c for c in COEFFICIENTS}
#: TOML tables in order, each with its keys in order ("" holds the top-level keys).
TABLES: Mapping[str, tuple[str, ...]] = {
    table: tuple(c.name for c in COEFFICIENTS if c.table == table)
    for table in dict.fromkeys(c.table for c in COEFFICIENTS)
}


def by_key(key: str) -> Coefficient:
    """The declaration of TOML key ``key`` (KeyError if there is none)."""
    return _BY_KEY[key]


@dataclass(frozen=True, slots=True)
class SearchParam:
    """One dimension of the tuning search space: a name, bounds (log, integer) or ``choices``."""

    name: str
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    integer: bool = False
    choices: tuple[str, ...] = ()


def _tier_params() -> list[SearchParam]:
    t = TIER_TUNING
    out = [SearchParam(f"k_factor.tiers[{i}].k", lo, hi, integer=True) for i, (lo, hi) in enumerate(t.k)]
    out.append(SearchParam("k_factor.tiers[0].offset", *t.offset, integer=True))
    out.extend(SearchParam(f"k_factor.tiers[{i}].width", *t.width, integer=True) for i in range(1, len(t.k)))
    return out


def search_space() -> tuple[SearchParam, ...]:
    """The tuning search space derived from the declarations, named by TOML key.

    The tiers are searched as :data:`TIER_TUNING` says (K of each tier, the first boundary as an
    offset from the initial rating, the next ones as widths); every other coefficient with a
    :class:`Tune` range as one dimension.
    """
    out: list[SearchParam] = []
    for c in COEFFICIENTS:
        if c.kind == "tiers":
            out.extend(_tier_params())
        elif c.tune is not None:
            tune = c.tune
            if c.kind == "choice":
                out.append(SearchParam(c.key, choices=tune.choices))
            else:
                out.append(SearchParam(c.key, tune.low, tune.high, tune.log, c.kind == "int"))
    return tuple(out)
