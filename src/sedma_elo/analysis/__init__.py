"""Analysis tools: backtests against peer systems, tuning, simulation and reports.

Everything here reads ratings from the engine (or the batch kernel that is tested to agree with
it); nothing here computes Sedma ratings on its own.
"""

from .backtest import SystemResult, backtest, results_to_json
from .fairness import Fairness, drift_per_100k, fairness_of, losing_well_gain, newcomer_convergence
from .forecast import Drift, Forecast, Forecaster, rating_drift, rating_quantiles
from .metrics import (
    CLIP,
    CalibrationBin,
    Metrics,
    Split,
    calibration_table,
    chronological_split,
    paired_bootstrap,
    player_bootstrap,
    score_forecasts,
)
from .objectives import OBJECTIVES, Constraints, TrialMeasures, pareto_front, trial_measures
from .peers import (
    FixedGlicko2Player,
    elo,
    glicko2_weekly,
    openskill_pl,
    peer_forecasters,
    trueskill_1vs1,
    tuned_elo,
)
from .sedma import calibrated, fit_logit_scale, sedma_rules
from .simulate import League, LeagueResult, simulate_league, spearman
from .table import MatchTable, table_from_history, table_from_matches

__all__ = [
    "CLIP",
    "OBJECTIVES",
    "CalibrationBin",
    "Constraints",
    "Drift",
    "Fairness",
    "FixedGlicko2Player",
    "Forecast",
    "Forecaster",
    "League",
    "LeagueResult",
    "MatchTable",
    "Metrics",
    "Split",
    "SystemResult",
    "TrialMeasures",
    "backtest",
    "calibrated",
    "calibration_table",
    "chronological_split",
    "drift_per_100k",
    "elo",
    "fairness_of",
    "fit_logit_scale",
    "glicko2_weekly",
    "losing_well_gain",
    "newcomer_convergence",
    "openskill_pl",
    "paired_bootstrap",
    "pareto_front",
    "peer_forecasters",
    "player_bootstrap",
    "rating_drift",
    "rating_quantiles",
    "results_to_json",
    "score_forecasts",
    "sedma_rules",
    "simulate_league",
    "spearman",
    "table_from_history",
    "table_from_matches",
    "trial_measures",
    "trueskill_1vs1",
    "tuned_elo",
]
