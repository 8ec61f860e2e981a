"""Forecast metrics and the chronological split of a history.

Conventions (the same as the published tennis figures the docs compare against):

* ``p`` is the predicted probability that side a wins, made from the ratings *before* the match.
* ``y`` is the outcome of side a: 1.0 win, 0.0 loss, 0.5 draw. Draws count as 0.5 outcomes in log
  loss and Brier score and are left out of accuracy (a draw has no side to be right about).
* Log loss clips ``p`` to ``[1e-15, 1 - 1e-15]`` so that one confident miss gives a large but
  finite penalty instead of infinity.
* Accuracy counts ``p == 0.5`` as a prediction for side a (a deterministic tie-break); it is
  ``None`` when every scored match is a draw.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError

__all__ = [
    "CLIP",
    "CalibrationBin",
    "Difference",
    "Metrics",
    "Split",
    "calibration_table",
    "chronological_split",
    "match_log_loss",
    "paired_bootstrap",
    "player_bootstrap",
    "score_forecasts",
]

FloatArray = npt.NDArray[np.float64]

#: Predicted probabilities are clipped to [CLIP, 1 - CLIP] inside the log loss.
CLIP = 1e-15


@dataclass(frozen=True, slots=True)
class Split:
    """Index ranges of a history of ``n`` matches, oldest first: ``[0, valid_start)`` is warm-up only,
    ``[valid_start, test_start)`` the validation window (for tuning), ``[test_start, n)`` the test window.
    """

    n: int
    valid_start: int
    test_start: int

    @property
    def n_test(self) -> int:
        """Number of matches in the test window."""
        return self.n - self.test_start

    @property
    def n_valid(self) -> int:
        """Number of matches in the validation window."""
        return self.test_start - self.valid_start


def chronological_split(n: int, test_fraction: float = 0.3, valid_fraction: float = 0.2) -> Split:
    """Split ``n`` matches into warm-up, validation and test windows, in that order.

    The test window is the last ``round(n * test_fraction)`` matches; the validation window the
    ``round(n * valid_fraction)`` matches just before it. Every window that is asked for must hold at
    least one match and the warm-up at least one, so a too short history is an error, not a NaN.

    Raises:
        ValidationError: ``test_fraction`` not in (0, 1), ``valid_fraction`` not in [0, 1), their sum
            not below 1, or ``n`` too small for the split (field ``history``).
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValidationError("test_fraction", f"must be in (0, 1), got {test_fraction}")
    if not 0.0 <= valid_fraction < 1.0:
        raise ValidationError("valid_fraction", f"must be in [0, 1), got {valid_fraction}")
    if test_fraction + valid_fraction >= 1.0:
        raise ValidationError(
            "valid_fraction",
            f"test_fraction + valid_fraction must be below 1, got {test_fraction + valid_fraction}",
        )
    n_test = round(n * test_fraction)
    n_valid = round(n * valid_fraction)
    test_start = n - n_test
    valid_start = test_start - n_valid
    if n_test < 1 or (valid_fraction > 0 and n_valid < 1) or valid_start < 1:
        raise ValidationError(
            "history",
            f"{n} matches are too few for a {test_fraction:.0%} test window"
            + (f" and a {valid_fraction:.0%} validation window" if valid_fraction > 0 else "")
            + " with at least one match in each and one warm-up match before them",
        )
    return Split(n, valid_start, test_start)


@dataclass(frozen=True, slots=True)
class CalibrationBin:
    """One bin of the calibration table: forecasts with ``low <= p < high`` (the last bin includes 1)."""

    low: float
    high: float
    count: int
    mean_predicted: float
    mean_observed: float


@dataclass(frozen=True, slots=True)
class Metrics:
    """Scores of probability forecasts; see the module docstring for the conventions."""

    n_test: int
    n_draws: int
    log_loss: float
    brier: float
    accuracy: float | None
    calibration: tuple[CalibrationBin, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (the calibration table as a list of objects)."""
        out = asdict(self)
        out["calibration"] = [asdict(b) for b in self.calibration]
        return out


def _check(p: FloatArray, y: FloatArray) -> None:
    if p.shape != y.shape or p.ndim != 1:
        raise ValidationError(
            "p", f"must be a 1-d array shaped like the outcomes, got {p.shape} vs {y.shape}"
        )
    if p.size == 0:
        raise ValidationError("history", "no matches to score")
    if not np.all(np.isfinite(p)) or np.any((p < 0.0) | (p > 1.0)):
        raise ValidationError("p", "every forecast must be a probability in [0, 1]")
    if np.any((y != 0.0) & (y != 0.5) & (y != 1.0)):
        raise ValidationError("y", "every outcome must be 0, 0.5 or 1")


def calibration_table(p: FloatArray, y: FloatArray, bins: int = 10) -> tuple[CalibrationBin, ...]:
    """Equal-width bins of the forecast ``p`` with the mean forecast and the mean outcome in each.

    Empty bins are left out.
    """
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    _check(p, y)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    sum_p = np.bincount(which, weights=p, minlength=bins)
    sum_y = np.bincount(which, weights=y, minlength=bins)
    return tuple(
        CalibrationBin(
            float(edges[i]), float(edges[i + 1]), int(counts[i]), sum_p[i] / counts[i], sum_y[i] / counts[i]
        )
        for i in range(bins)
        if counts[i] > 0
    )


def score_forecasts(p: npt.ArrayLike, y: npt.ArrayLike, *, bins: int = 10) -> Metrics:
    """Log loss, Brier score, accuracy and calibration of forecasts ``p`` against outcomes ``y``.

    Raises:
        ValidationError: empty input, shapes that differ, a forecast outside [0, 1] or an outcome
            other than 0, 0.5 or 1.
    """
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    _check(p, y)
    log_loss = float(np.mean(_losses(p, y)))
    brier = float(np.mean((p - y) ** 2))
    decided = y != 0.5
    n_decided = int(decided.sum())
    if n_decided:
        correct = (p[decided] >= 0.5) == (y[decided] == 1.0)
        accuracy = float(correct.mean())
    else:
        accuracy = None
    return Metrics(
        int(p.size), int(p.size - n_decided), log_loss, brier, accuracy, calibration_table(p, y, bins)
    )


def _losses(p: FloatArray, y: FloatArray) -> FloatArray:
    q = np.clip(p, CLIP, 1.0 - CLIP)
    return np.asarray(-(y * np.log(q) + (1.0 - y) * np.log1p(-q)), dtype=np.float64)


def match_log_loss(p: npt.ArrayLike, y: npt.ArrayLike) -> FloatArray:
    """The log loss of each forecast (the mean of this is :attr:`Metrics.log_loss`).

    Raises:
        ValidationError: as :func:`score_forecasts`.
    """
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    _check(p, y)
    return _losses(p, y)


@dataclass(frozen=True, slots=True)
class Difference:
    """A system's log loss minus the reference's on the same matches, with a bootstrap interval.

    Attributes:
        mean: the difference of the mean log losses (negative: the system predicts better).
        low, high: the ``level`` percentile interval of the difference over ``resamples`` paired
            bootstrap resamples of the matches.
        resamples, level: as used.
        block: matches per resampled run (1: matches drawn independently).
        unit: what was resampled: ``"match"`` (single matches or runs of ``block`` of them) or
            ``"player"`` (:func:`player_bootstrap`).
    """

    mean: float
    low: float
    high: float
    resamples: int
    level: float
    block: int = 1
    unit: str = "match"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return asdict(self)


def paired_bootstrap(
    p: npt.ArrayLike,
    p_reference: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    block: int = 1,
) -> Difference:
    """Log loss of ``p`` minus that of ``p_reference`` on outcomes ``y``, with a paired bootstrap interval.

    Each resample draws the matches with replacement and scores *both* systems on the same draw,
    so the interval is for the difference itself (much narrower than two separate intervals,
    because both systems find the same matches hard). With ``block`` 1 matches are resampled
    independently, which ignores that neighbouring matches share players and a tournament; with a
    larger ``block`` it is a circular moving-block bootstrap: each resample is ``ceil(n / block)``
    runs of ``block`` consecutive matches (wrapping at the end) with uniformly drawn starts, which
    keeps the dependence inside a run (a history ordered by date keeps a tournament together).

    Raises:
        ValidationError: as :func:`score_forecasts`, or ``resamples`` or ``block`` below 1, or
            ``level`` not in (0, 1).
    """
    if resamples < 1:
        raise ValidationError("resamples", f"must be at least 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValidationError("level", f"must be in (0, 1), got {level}")
    if block < 1:
        raise ValidationError("block", f"must be at least 1, got {block}")
    d = match_log_loss(p, y) - match_log_loss(p_reference, y)
    run = min(block, d.size)
    # What is drawn: single matches, or runs of `run` consecutive matches (each by its mean).
    units = d if run == 1 else _run_sums(d, run) / run
    draws = -(-d.size // run)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 10_000_000 // draws)  # bounded memory: about 80 MB of indexes at a time
    for start in range(0, resamples, chunk):
        k = min(chunk, resamples - start)
        idx = rng.integers(0, units.size, size=(k, draws))
        means[start : start + k] = units[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Difference(float(d.mean()), float(low), float(high), resamples, level, block)


def player_bootstrap(
    p: npt.ArrayLike,
    p_reference: npt.ArrayLike,
    y: npt.ArrayLike,
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Difference:
    """As :func:`paired_bootstrap`, but resampling *players*: a cluster bootstrap for matches between them.

    Each resample draws as many players as play in the matches, with replacement, and keeps every
    match between two drawn players, counted ``m_a * m_b`` times (``m`` a player's multiplicity
    in the draw): the matches a league of the drawn players would have played. A strong player's
    many matches stay or go together, so the interval allows for the dependence of the matches of
    one player, which resampling single matches ignores. The difference of each resample is the
    weighted mean of the per-match differences (a resample with no match left is drawn again).

    Raises:
        ValidationError: as :func:`paired_bootstrap`, or ``a`` and ``b`` not the shape of ``p``.
    """
    if resamples < 1:
        raise ValidationError("resamples", f"must be at least 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValidationError("level", f"must be in (0, 1), got {level}")
    d = match_log_loss(p, y) - match_log_loss(p_reference, y)
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if a.shape != d.shape or b.shape != d.shape:
        raise ValidationError("players", f"need one player pair per forecast, got {a.shape} and {b.shape}")
    players, index = np.unique(np.concatenate([a, b]), return_inverse=True)
    ia, ib = index[: d.size], index[d.size :]
    k = players.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 5_000_000 // max(d.size, k))  # bounded memory: a few 10 MB arrays at a time
    done = 0
    while done < resamples:
        m = min(chunk, resamples - done)
        counts = rng.multinomial(k, np.full(k, 1.0 / k), size=m).astype(np.float64)
        weights = counts[:, ia] * counts[:, ib]
        total = weights.sum(axis=1)
        ok = total > 0
        got = int(ok.sum())
        means[done : done + got] = (weights[ok] @ d) / total[ok]
        done += got
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Difference(float(d.mean()), float(low), float(high), resamples, level, 1, "player")


def _run_sums(d: FloatArray, block: int) -> FloatArray:
    """Sum of ``d[i : i + block]`` for every start ``i``, wrapping around the end (circular runs)."""
    wrapped = np.concatenate([d, d[: block - 1]])
    sums: FloatArray = np.concatenate([[0.0], np.cumsum(wrapped)])
    out: FloatArray = sums[block : block + d.size] - sums[: d.size]
    return out
