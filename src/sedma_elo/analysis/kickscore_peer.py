"""kickscore (the KDD 2019 paper's own package) as a peer, refitted per block of matches.

The protocol is the one of :mod:`sedma_elo.analysis.whole_history`: every match of a block is
predicted from the model fitted on all matches before the block, then the block is observed and
the model refitted, warm-started from the previous fit. A match is never predicted by a model
that has seen it.

The model: a Gaussian-process score per player with a constant + Wiener kernel (the paper's best
dynamics on tennis; the Wiener process starts a day before the history) or a constant +
Matern-3/2 kernel, time in years, logit win likelihood, fitted by expectation propagation (EP)
through the package's own observations and state-space fitters.

**Refit schedule** (``sweeps``), the lever that decides the run time (``docs/analysis.md`` has
the profile):

* ``"full"``: ``Model.fit(max_iter, lr)``, the package's fit: every EP sweep updates the site of
  *every* observation so far and refits every player. A refit costs time in proportion to the
  whole history (the package's EP loop is Python, tens of microseconds per observation), so a
  run costs about ``n^2 / refit_every``.
* ``"recent"``: the first block (``first_block`` matches, the warm-up) gets the full fit; after
  it, each refit runs up to ``max_iter`` EP sweeps over the **new block's observations only**
  and refits only the players in it (their whole score process, by the package's Kalman smoother;
  every other player's posterior is unchanged because none of their sites changed). The sites of
  earlier matches keep the values of their last update, as in online (assumed-density) EP. A run
  then costs about ``n`` plus one full fit of the warm-up.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ValidationError
from .forecast import Forecast, Forecaster
from .metrics import Split
from .table import MatchTable
from .whole_history import _check_block, _sound

__all__ = ["KICKSCORE_GRID", "SWEEPS", "kickscore_periodic"]

#: Refit schedules (see the module docstring).
SWEEPS = ("full", "recent")

#: The settings ``backtest --compare`` chooses among on the validation window.
KICKSCORE_GRID: tuple[dict[str, float], ...] = ({"var": 0.05}, {"var": 0.2})

_FIT_ERRORS = (np.linalg.LinAlgError, FloatingPointError, ZeroDivisionError)


def _schedule(n: int, refit_every: int, first_block: int) -> list[tuple[int, int]]:
    """Blocks ``[start, end)``: one of ``first_block`` matches (when above 0), then ``refit_every`` each."""
    first = min(n, max(0, first_block))
    out = [(0, first)] if first else []
    out += [(s, min(n, s + refit_every)) for s in range(first, n, refit_every)]
    return out


def _fit_recent(model: Any, observations: list[Any], max_iter: int, lr: float, tol: float) -> None:
    """Up to ``max_iter`` EP sweeps over ``observations`` only, refitting only the players they touch."""
    items = {id(item): item for obs in observations for item in obs._items}.values()
    for item in items:
        # The package's fit() sweeps right after allocating, so a new sample's first cavity is
        # the prior; fitting first makes it the posterior given every earlier match.
        item.fitter.allocate()
        item.fitter.fit()
    for _ in range(max_iter):
        diff = 0.0
        for obs in observations:
            diff = max(diff, obs.ep_update(lr=lr))
        for item in items:
            item.fitter.fit()
        if diff < tol:
            return


def kickscore_periodic(
    var: float = 0.1,
    lscale: float = 1.0,
    constant_var: float = 1.0,
    refit_every: int = 20_000,
    max_iter: int = 10,
    limit: float = 20.0,
    dynamics: str = "wiener",
    sweeps: str = "full",
    first_block: int | None = 0,
    lr: float = 1.0,
    tol: float = 1e-3,
    warm_iter: int | None = None,
    full_every: int = 0,
) -> Forecaster:
    """kickscore (constant + Wiener or Matern-3/2 kernel, logit wins) refitted after every block.

    ``var`` is the dynamic part's variance (per year for Wiener), ``lscale`` the Matern-3/2
    length scale in years (unused by Wiener), ``constant_var`` the constant part's variance;
    scores are in logit units (``limit`` bounds a sound score). ``sweeps``, ``first_block``
    (``None``: every match before the validation window; 0: a block like every other),
    ``max_iter`` (EP sweeps per refit; ``warm_iter`` for the first block, default ``max_iter``),
    ``lr`` and ``tol`` (the package's damping and convergence tolerance) set the refit schedule
    (module docstring); with ``sweeps="recent"``, ``full_every`` N above 0 makes every N-th refit
    the package's full fit (every site revisited). Ratings reported for drift are the predictive
    mean scores, x 400 / ln 10 to put them on the Elo scale.

    Raises:
        ValidationError: ``refit_every`` or ``max_iter`` below 1, a variance, scale or ``lr`` not
            above 0, ``dynamics`` not ``wiener`` or ``matern32``, ``sweeps`` not in :data:`SWEEPS`.
    """
    _check_block(refit_every)
    if dynamics not in ("wiener", "matern32"):
        raise ValidationError("dynamics", f"must be 'wiener' or 'matern32', got {dynamics!r}")
    if sweeps not in SWEEPS:
        raise ValidationError("sweeps", f"must be one of {', '.join(SWEEPS)}, got {sweeps!r}")
    for field, count in (("max_iter", max_iter), ("warm_iter", max_iter if warm_iter is None else warm_iter)):
        if count < 1:
            raise ValidationError(field, f"must be at least 1, got {count}")
    for field, value in (("var", var), ("lscale", lscale), ("constant_var", constant_var), ("lr", lr)):
        if not value > 0:
            raise ValidationError(field, f"must be > 0, got {value}")
    warm = max_iter if warm_iter is None else warm_iter
    if full_every < 0:
        raise ValidationError("full_every", f"must be at least 0, got {full_every}")

    def run(table: MatchTable, split: Split) -> Forecast:
        import kickscore as ks  # numba-compiled on first use: imported only when the peer runs

        n = len(table)
        model = ks.BinaryModel(obs_type="logit")
        names = [str(i) for i in range(table.n_players)]
        years = ((table.day - table.day.min()) / 365.25).tolist()

        # One Wiener process per player from a day before the history's first match (its variance
        # is 0 at its start, which would make a sample there singular); the constant part is the
        # player's level, the Wiener part its drift since the start.
        dynamic = (
            ks.kernel.Wiener(var=var, t0=-1.0 / 365.25)
            if dynamics == "wiener"
            else ks.kernel.Matern32(var=var, lscale=lscale)
        )
        kernel = ks.kernel.Constant(var=constant_var) + dynamic
        a_list, b_list, y_list = table.a.tolist(), table.b.tolist(), table.y.tolist()
        seen = np.zeros(table.n_players, dtype=bool)
        last = np.zeros(table.n_players)
        sa, sb = np.zeros(n), np.zeros(n)
        guarded = failed = 0

        def score(player: int, t: float) -> float:
            nonlocal guarded
            if not seen[player]:
                return 0.0
            try:
                mean, _ = model.item[names[player]].predict(np.array([t]))
            except RuntimeError:  # the last refit failed: the item has no posterior to predict from
                guarded += 1
                return float(last[player])
            value = float(mean[0])
            if not math.isfinite(value) or abs(value) > limit:
                guarded += 1
                return float(last[player])
            last[player] = value
            return value

        p = np.full(n, 0.5)
        failed_last = False
        warm_up = split.valid_start if first_block is None else first_block
        for number, (start, end) in enumerate(_schedule(n, refit_every, warm_up)):
            if start > 0:
                for i in range(start, end):
                    a, b, t = a_list[i], b_list[i], years[i]
                    sa[i], sb[i] = score(a, t), score(b, t)
                    if seen[a] and seen[b] and not failed_last:
                        p[i] = model.probabilities([names[a]], [names[b]], t=t)[0]
                    elif seen[a] or seen[b]:
                        # one side has no observation yet (its score is the prior, mean 0), or
                        # the last refit failed: the logistic of the mean scores
                        p[i] = 1.0 / (1.0 + math.exp(sb[i] - sa[i]))
            first_obs = len(model.observations)
            for i in range(start, end):
                for q in (a_list[i], b_list[i]):
                    if names[q] not in model.item:
                        model.add_item(names[q], kernel=kernel)
                name_a, name_b = names[a_list[i]], names[b_list[i]]
                winner, loser = (name_a, name_b) if y_list[i] >= 0.5 else (name_b, name_a)
                model.observe(winners=[winner], losers=[loser], t=years[i])
            seen[a_list[start:end]] = True
            seen[b_list[start:end]] = True
            failed_last = False
            try:
                if number == 0:
                    model.fit(max_iter=int(warm), lr=lr, tol=tol)
                elif sweeps == "full" or (full_every and number % full_every == 0):
                    model.fit(max_iter=int(max_iter), lr=lr, tol=tol)
                else:
                    _fit_recent(model, model.observations[first_obs:], int(max_iter), lr, tol)
            except _FIT_ERRORS:
                failed += 1  # the scores keep their last state; the next refit starts from there
                failed_last = True
        final = np.array([score(q, years[-1]) for q in range(table.n_players)])
        p, bad = _sound(p)
        elo = 400.0 / math.log(10.0)
        params: dict[str, float | str] = {
            "dynamics": dynamics,
            "var": var,
            "lscale": lscale,
            "constant_var": constant_var,
            "refit_every": refit_every,
            "max_iter": max_iter,
            "sweeps": sweeps,
            "full_every": full_every,
            "first_block": warm_up,
            "lr": lr,
            "guarded": guarded + bad,
            "failed_fits": failed,
        }
        shape = (
            f"wiener var={var:g}/y" if dynamics == "wiener" else f"matern32 var={var:g} lscale={lscale:g}y"
        )
        every = f", full fit every {full_every} refits" if sweeps == "recent" and full_every else ""
        name = f"kickscore (constant {constant_var:g} + {shape}, refit every {refit_every}, {sweeps} sweeps"
        name += f"{every})"
        return Forecast(name, p, sa * elo, sb * elo, final * elo, 0.0, params)

    return run
