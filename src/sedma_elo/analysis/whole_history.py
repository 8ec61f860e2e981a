"""The strongest published peers, run through their own packages: Whole-History Rating and kickscore.

Both fit every player's rating *curve* over the whole history at once, so they cannot update
match by match. The protocol (the one of the KDD 2019 paper, Maystre et al., for its batch
models): the history is cut into blocks of ``refit_every`` consecutive matches; every match of a
block is predicted from the model fitted on **all matches before the block**, then the block's
matches are added and the model is refitted, warm-started from the previous fit. A match is
therefore never predicted by a model that has seen it. Smaller blocks predict better and cost
more; the block size is part of each system's reported settings.

* **WHR** (package ``whr``, C++ core): ratings on the Elo scale (0 = the prior's mean), ``w2`` the
  variance of a player's rating drift per day (Elo points squared), ``iterations`` Newton steps
  per refit. ``p = 1 / (1 + 10^((r_b - r_a) / 400))`` with each player's rating at the match day.
* **kickscore** (package ``kickscore``, the paper's own): a Gaussian-process score per player
  with a constant + Wiener kernel (the paper's best dynamics on tennis; the Wiener process starts
  at the player's first match) or a constant + Matern-3/2 kernel, time in years, logit win
  likelihood, fitted by EP with at most ``max_iter`` sweeps per refit; ``p`` is the model's
  predictive win probability.

**Guards.** Batch fits can diverge (WHR's ratings overflowed near the end of another history). A
prediction never uses a non-finite rating or one beyond ``+-limit`` Elo: the player's last sound
rating (or the prior) is used instead and the match is counted in ``params["guarded"]``; a
non-finite probability becomes 0.5 and is counted too; a kickscore refit that fails numerically
(a singular covariance) keeps the previous state and is counted in ``params["failed_fits"]``.
The counts are in the report, so a guarded run is visible rather than silently repaired.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError
from .forecast import Forecast, Forecaster
from .metrics import Split
from .table import MatchTable

__all__ = ["later_slice", "whr_periodic"]

FloatArray = npt.NDArray[np.float64]


def _check_block(refit_every: int) -> None:
    if refit_every < 1:
        raise ValidationError("refit_every", f"must be at least 1, got {refit_every}")


def _blocks(n: int, refit_every: int) -> list[tuple[int, int]]:
    return [(s, min(n, s + refit_every)) for s in range(0, n, refit_every)]


def _elo_p(ra: FloatArray, rb: FloatArray) -> FloatArray:
    return np.asarray(1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)), dtype=np.float64)


def whr_periodic(
    w2: float = 14.0,
    refit_every: int = 2000,
    iterations: int = 10,
    virtual_games: int = 2,
    limit: float = 4000.0,
) -> Forecaster:
    """Whole-History Rating refitted after every block of ``refit_every`` matches (see the module).

    Raises:
        ValidationError: ``refit_every`` or ``iterations`` below 1, or ``w2`` not above 0.
    """
    _check_block(refit_every)
    if iterations < 1:
        raise ValidationError("iterations", f"must be at least 1, got {iterations}")
    if not w2 > 0:
        raise ValidationError("w2", f"must be > 0, got {w2}")

    def run(table: MatchTable, split: Split) -> Forecast:
        import whr  # C++ extension: imported only when the peer runs

        n = len(table)
        base = whr.Base(config={"w2": float(w2), "virtual_games": int(virtual_games)})
        day = (table.day - table.day.min()).tolist()
        a_list, b_list, y_list = table.a.tolist(), table.b.tolist(), table.y.tolist()
        names = [str(i) for i in range(table.n_players)]
        last = np.zeros(table.n_players)  # last sound rating of each player (0 = the prior)
        seen = np.zeros(table.n_players, dtype=bool)
        ra, rb = np.zeros(n), np.zeros(n)
        guarded = 0

        def rating(evaluate: object, player: int, at: int) -> float:
            nonlocal guarded
            if not seen[player]:
                return 0.0
            value = evaluate.get_rating(names[player], at)  # type: ignore[attr-defined]
            if value is None or not math.isfinite(value) or abs(value) > limit:
                guarded += 1
                return float(last[player])
            last[player] = value
            return float(value)

        code = {1.0: "B", 0.0: "W", 0.5: "D"}
        for start, end in _blocks(n, refit_every):
            if start > 0:
                evaluate = whr.Evaluate(base)
                for i in range(start, end):
                    ra[i] = rating(evaluate, a_list[i], day[i])
                    rb[i] = rating(evaluate, b_list[i], day[i])
            base.create_games(
                [[names[a_list[i]], names[b_list[i]], code[y_list[i]], day[i]] for i in range(start, end)]
            )
            seen[a_list[start:end]] = True
            seen[b_list[start:end]] = True
            base.iterate(int(iterations))
        evaluate = whr.Evaluate(base)
        final = np.array([rating(evaluate, q, day[-1]) for q in range(table.n_players)])
        p, bad = _sound(_elo_p(ra, rb))
        params = {"w2": w2, "refit_every": refit_every, "iterations": iterations, "guarded": guarded + bad}
        return Forecast(f"whr (w2={w2:g}, refit every {refit_every})", p, ra, rb, final, 0.0, params)

    return run


def _sound(p: FloatArray) -> tuple[FloatArray, int]:
    """``p`` with non-finite values replaced by 0.5, and how many there were."""
    bad = ~np.isfinite(p)
    return np.where(bad, 0.5, p), int(bad.sum())


def later_slice(inner: Forecaster, start: int, label: str | None = None) -> Forecaster:
    """``inner`` run on the matches from ``start`` on only (a documented later slice of the history).

    Matches before ``start`` get the forecast 0.5 and are never scored as long as ``start`` is at
    or before the validation window; the system's name says where it started. For peers whose
    full run is too slow on a given machine.

    Raises:
        ValidationError: ``start`` after the start of the validation window.
    """

    def run(table: MatchTable, split: Split) -> Forecast:
        if start > split.valid_start:
            raise ValidationError("start", f"{start} is after the validation window ({split.valid_start})")
        tail = _tail(table, start)
        inner_split = Split(split.n - start, split.valid_start - start, split.test_start - start)
        fc = inner(tail, inner_split)
        p = np.concatenate([np.full(start, 0.5), fc.p])
        name = f"{fc.system}, from match {start}" if label is None else label
        return Forecast(name, p, None, None, None, None, {**fc.params, "slice_start": start})

    return run


def _tail(table: MatchTable, start: int) -> MatchTable:
    """The matches from ``start`` on, with the same player index (no columnar history: peers only)."""
    return MatchTable(table.a[start:], table.b[start:], table.y[start:], table.day[start:], table.players)


#: Grids of the settings ``backtest --compare`` chooses on the validation window.
WHR_GRID: tuple[dict[str, float], ...] = tuple({"w2": w2} for w2 in (7.0, 14.0, 28.0))
