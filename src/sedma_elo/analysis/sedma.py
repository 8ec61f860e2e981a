"""The Sedma rules as a forecaster, and a calibration wrapper for any forecaster.

A rule set predicts a match by its expected score from the ratings before it,
``p(a wins) = 1 / (1 + 10^((rb - ra) / 400))`` for one-against-one. The bonuses and the malus
move the *adjusted score* a player is compared against, not this prediction, so the expected
score is reported as is; :func:`calibrated` is the documented, optional alternative.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..batch.replay import replay
from ..core.rules import REFERENCE_RULES, Rules
from ..errors import ValidationError
from .forecast import Forecast, Forecaster
from .metrics import CLIP, Split
from .table import MatchTable

__all__ = ["calibrated", "fit_logit_scale", "sedma_rules"]

FloatArray = npt.NDArray[np.float64]


def _replay(table: MatchTable, rules: Rules) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Win probability of side a, pre-match ratings of both sides, and final ratings.

    Uses :func:`sedma_elo.batch.replay.replay` (the batch kernel on large histories, the
    fold of :mod:`sedma_elo.core.fold` on small ones; the two agree exactly).
    """
    if table.history is None:
        raise ValidationError(
            "history", "the Sedma rules need the columnar history (build the table from one)"
        )
    result = replay(table.history, rules, record=True)
    rec = result.record
    assert rec is not None
    before = rec.before.astype(np.float64)
    final = result.rating_array[: table.n_players].astype(np.float64)
    return rec.expected[:, 0].copy(), before[:, 0].copy(), before[:, 1].copy(), final


def sedma_rules(rules: Rules = REFERENCE_RULES, name: str | None = None) -> Forecaster:
    """Forecast each match with ``rules``: the expected score from the ratings before it."""

    def run(table: MatchTable, split: Split) -> Forecast:
        p, ra, rb, final = _replay(table, rules)
        return Forecast(name or f"sedma {rules.label}", p, ra, rb, final, float(rules.initial_rating), {})

    return run


def _logit(p: FloatArray) -> FloatArray:
    q = np.clip(p, CLIP, 1.0 - CLIP)
    return np.asarray(np.log(q) - np.log1p(-q), dtype=np.float64)


def _scaled_loss(z: FloatArray, y: FloatArray, s: float) -> float:
    # log(1 + exp(-x)) computed stably for the two outcomes, draws as half of each
    x = s * z
    return float(np.mean(y * np.logaddexp(0.0, -x) + (1.0 - y) * np.logaddexp(0.0, x)))


def fit_logit_scale(p: npt.ArrayLike, y: npt.ArrayLike, low: float = 0.05, high: float = 5.0) -> float:
    """The factor ``s`` in ``[low, high]`` minimising the log loss of ``sigmoid(s * logit(p))``.

    The loss is convex in ``s``, so a golden-section search finds it to about 1e-6. For an Elo
    expected score this is the same as multiplying the rating difference by ``s``.
    """
    z = _logit(np.asarray(p, dtype=np.float64))
    yy = np.asarray(y, dtype=np.float64)
    g = (math.sqrt(5.0) - 1.0) / 2.0
    lo, hi = low, high
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = _scaled_loss(z, yy, c), _scaled_loss(z, yy, d)
    while hi - lo > 1e-6:
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = _scaled_loss(z, yy, c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = _scaled_loss(z, yy, d)
    return (lo + hi) / 2.0


def calibrated(inner: Forecaster) -> Forecaster:
    """``inner`` with its rating differences scaled by a factor fitted on the validation window only.

    The ratings themselves are untouched; only the probability read from them changes, so this
    measures how much of a rule set's loss is a mis-scaled prediction rather than bad ratings.
    """

    def run(table: MatchTable, split: Split) -> Forecast:
        if split.n_valid == 0:
            raise ValidationError(
                "valid_fraction", "calibration needs a validation window (a fraction above 0)"
            )
        fc = inner(table, split)
        window = slice(split.valid_start, split.test_start)
        s = fit_logit_scale(fc.p[window], table.y[window])
        z = _logit(fc.p)
        p = 1.0 / (1.0 + np.exp(-s * z))
        params = {**fc.params, "logit_scale": s}
        return Forecast(
            f"{fc.system}, calibrated (x{s:.3f})",
            p,
            fc.rating_a,
            fc.rating_b,
            fc.final,
            fc.initial_rating,
            params,
        )

    return run
