"""sedma-elo: an exact, explainable Elo rating system for the card game Seven (Sedma/Sedmice).

The public API is defined here once; import from ``sedma_elo`` rather than from submodules::

    from sedma_elo import Match, PlayerStats, REFERENCE_RULES, rate

    match = Match.single("alice", "bob", "a", PlayerStats(won_by_16=1), PlayerStats(bad_moves=2))
    result = rate(match, {"alice": 1000, "bob": 1100})
    result["alice"].rating_after
"""

from .batch.history import HistoryArrays, load_history, read_history, read_matches, write_matches
from .batch.kernel import KernelRecord, run_kernel
from .batch.replay import ReplayResult, replay
from .core.engine import (
    BonusTerm,
    MalusTerm,
    PlayerChange,
    RatingResult,
    ScoreBreakdown,
    expected_score,
    predict_win,
    rate,
    score_breakdown,
)
from .core.fold import RatingState, fold
from .core.model import MAX_COUNT, Match, PlayerStats, Winner
from .core.rules import (
    MAX_RATING,
    MIN_RATING,
    REFERENCE_RULES,
    BonusRule,
    KTier,
    Rules,
    load_rules,
    rules_from_toml,
)
from .errors import (
    AuthError,
    ConflictError,
    GameRecordError,
    HistoryError,
    NotFoundError,
    PermissionDeniedError,
    RulesError,
    SedmaEloError,
    ValidationError,
)

__version__ = "0.1.0"

__all__ = [
    "MAX_COUNT",
    "MAX_RATING",
    "MIN_RATING",
    "REFERENCE_RULES",
    "AuthError",
    "BonusRule",
    "BonusTerm",
    "ConflictError",
    "GameRecordError",
    "HistoryArrays",
    "HistoryError",
    "KTier",
    "KernelRecord",
    "MalusTerm",
    "Match",
    "NotFoundError",
    "PermissionDeniedError",
    "PlayerChange",
    "PlayerStats",
    "RatingResult",
    "RatingState",
    "ReplayResult",
    "Rules",
    "RulesError",
    "ScoreBreakdown",
    "SedmaEloError",
    "ValidationError",
    "Winner",
    "__version__",
    "expected_score",
    "fold",
    "load_history",
    "load_rules",
    "predict_win",
    "rate",
    "read_history",
    "read_matches",
    "replay",
    "rules_from_toml",
    "run_kernel",
    "score_breakdown",
    "write_matches",
]
