"""Peer rating systems for ``backtest --compare``, each through its real package where one exists.

* **Elo**: plain Elo with one constant K and unrounded ratings (start 1500, scale 400). The only
  system written here: it is three lines, and it is the textbook baseline, not the Sedma rules.
  :func:`tuned_elo` picks K on the validation window only.
* **Glicko-2** (package ``glicko2`` 2.1.0) with one rating period per calendar week, through
  :class:`FixedGlicko2Player`, which corrects the package's volatility bug (see there).
* **TrueSkill** (package ``trueskill``), one update per match.
* **OpenSkill** (package ``openskill``, Plackett-Luce model), one update per match.
* **WHR** and **kickscore**, the strongest published models, refitted per block of matches
  (:mod:`sedma_elo.analysis.whole_history`), their settings always chosen on the validation window.

Each forecaster predicts a match from the ratings before it and only then applies the result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import glicko2
import numpy as np
import trueskill
from openskill.models import PlackettLuce

from ..errors import ValidationError
from .forecast import Forecast, Forecaster
from .kickscore_peer import KICKSCORE_GRID, kickscore_periodic
from .metrics import Split, score_forecasts
from .table import MatchTable
from .whole_history import WHR_GRID, later_slice, whr_periodic

__all__ = [
    "ELO_K_GRID",
    "FixedGlicko2Player",
    "elo",
    "glicko2_weekly",
    "openskill_pl",
    "peer_forecasters",
    "trueskill_1vs1",
    "tuned",
    "tuned_elo",
]

#: Candidate constant K values for :func:`tuned_elo` (Elo points per unit of surprise).
ELO_K_GRID: tuple[float, ...] = (8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64)


def elo(k: float = 32.0, initial: float = 1500.0) -> Forecaster:
    """Plain Elo: ``p = 1 / (1 + 10^((rb - ra) / 400))``, ``r += k * (score - p)``, no rounding."""

    def run(table: MatchTable, split: Split) -> Forecast:
        n = len(table)
        ratings = [initial] * table.n_players
        p = np.empty(n)
        ra = np.empty(n)
        rb = np.empty(n)
        for i, (a, b, y) in enumerate(zip(table.a.tolist(), table.b.tolist(), table.y.tolist(), strict=True)):
            r_a, r_b = ratings[a], ratings[b]
            e = 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))
            p[i], ra[i], rb[i] = e, r_a, r_b
            ratings[a] = r_a + k * (y - e)
            ratings[b] = r_b - k * (y - e)
        return Forecast(f"elo(k={k:g})", p, ra, rb, np.array(ratings), initial, {"k": k})

    return run


def tuned(name: str, factory: Callable[..., Forecaster], grid: Sequence[Mapping[str, Any]]) -> Forecaster:
    """The forecaster ``factory(**point)`` for the ``grid`` point with the lowest validation log loss.

    Each candidate replays only the matches before the test window (the test window cannot
    influence the choice); the chosen one then replays the whole history.

    Raises:
        ValidationError: the split has no validation window.
    """

    def run(table: MatchTable, split: Split) -> Forecast:
        if split.n_valid < 1:
            raise ValidationError("valid_fraction", f"tuning {name} needs a validation window")
        head = table.head(split.test_start)
        window = slice(split.valid_start, split.test_start)
        scored = []
        for point in grid:
            fc = factory(**point)(head, split)
            scored.append((score_forecasts(fc.p[window], head.y[window]).log_loss, point))
        loss, point = min(scored, key=lambda item: item[0])
        fc = factory(**point)(table, split)
        label = ", ".join(
            f"{k}={v:g}" if isinstance(v, float | int) else f"{k}={v}" for k, v in point.items()
        )
        params = {**fc.params, **point, "valid_log_loss": loss}
        return Forecast(
            f"{name} tuned ({label})", fc.p, fc.rating_a, fc.rating_b, fc.final, fc.initial_rating, params
        )

    return run


def tuned_elo(grid: Sequence[float] = ELO_K_GRID, initial: float = 1500.0) -> Forecaster:
    """Plain Elo with the K of ``grid`` that has the lowest log loss on the validation window."""
    return tuned("elo", lambda k: elo(k, initial), [{"k": float(k)} for k in grid])


# ---------------------------------------------------------------------------- Glicko-2
_SCALE = 173.7178  # Glicko-2's internal scale factor, as in the package


class FixedGlicko2Player(glicko2.Player):  # type: ignore[misc]
    """``glicko2.Player`` with the volatility step of Glickman's paper.

    The package's ``_f`` (step 5 of the algorithm, the function whose root is the new volatility)
    uses the player's *rating* squared, ``mu**2``, where the paper has the rating *deviation*
    squared, ``phi**2``. The volatility then depends on how far the rating is from 1500 and can
    swing far from the paper's value for strong and weak players. This subclass replaces ``_f``
    with the paper's formula and changes nothing else.
    """

    def _f(self, x: float, delta: float, v: float, a: float) -> float:
        ex = math.exp(x)
        phi2 = self._Player__rd**2
        return float(ex * (delta**2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / self._tau**2)


def _glicko_p(mu_a: float, phi_a: float, mu_b: float, phi_b: float) -> float:
    """Win probability on the Glicko-2 scale with both players' deviations combined."""
    g = 1.0 / math.sqrt(1.0 + 3.0 * (phi_a**2 + phi_b**2) / math.pi**2)
    return 1.0 / (1.0 + math.exp(-g * (mu_a - mu_b)))


def glicko2_weekly(
    tau: float = 0.5, period_days: int = 7, fixed: bool = True, vol: float = 0.06
) -> Forecaster:
    """Glicko-2 with one rating period per ``period_days`` days (start 1500, RD 350, volatility ``vol``).

    Within a period every match is predicted from the ratings at the start of the period; at its
    end each player who played is updated once with all their results (the algorithm as
    published). A player who sat out ``m`` periods gets ``phi^2 + m * sigma^2`` (the paper's step
    6 applied ``m`` times), capped at the starting RD. ``fixed=False`` uses the package's own,
    buggy ``Player`` (for the docs' comparison).
    """
    cls = FixedGlicko2Player if fixed else glicko2.Player

    def run(table: MatchTable, split: Split) -> Forecast:
        n = len(table)
        players = [cls(1500.0, 350.0, vol) for _ in range(table.n_players)]
        for pl in players:
            pl._tau = tau
        last_period = [-1] * table.n_players
        max_phi2 = (350.0 / _SCALE) ** 2
        p = np.empty(n)
        ra = np.empty(n)
        rb = np.empty(n)
        period = (table.day // period_days).tolist()
        a_list, b_list, y_list = table.a.tolist(), table.b.tolist(), table.y.tolist()
        i = 0
        while i < n:
            j = i
            while j < n and period[j] == period[i]:
                j += 1
            cur = period[i]
            involved = set(a_list[i:j]) | set(b_list[i:j])
            for q in involved:
                pl = players[q]
                if last_period[q] >= 0 and cur - last_period[q] > 1:
                    missed = cur - last_period[q] - 1
                    phi2 = min(pl._Player__rd**2 + missed * pl.vol**2, max_phi2)
                    pl._Player__rd = math.sqrt(phi2)
                last_period[q] = cur
            snap = {q: (players[q].rating, players[q].rd) for q in involved}
            games: dict[int, tuple[list[float], list[float], list[float]]] = {
                q: ([], [], []) for q in involved
            }
            for t in range(i, j):
                a, b, y = a_list[t], b_list[t], y_list[t]
                (r_a, d_a), (r_b, d_b) = snap[a], snap[b]
                p[t] = _glicko_p((r_a - 1500) / _SCALE, d_a / _SCALE, (r_b - 1500) / _SCALE, d_b / _SCALE)
                ra[t], rb[t] = r_a, r_b
                for me, (r_o, d_o), s in ((a, snap[b], y), (b, snap[a], 1.0 - y)):
                    g = games[me]
                    g[0].append(r_o)
                    g[1].append(d_o)
                    g[2].append(s)
            for q, (rs, ds, ss) in games.items():
                players[q].update_player(rs, ds, ss)
            i = j
        final = np.array([pl.rating for pl in players])
        name = f"glicko-2 ({period_days}-day periods{'' if fixed else ', unpatched'})"
        return Forecast(name, p, ra, rb, final, 1500.0, {"tau": tau, "period_days": period_days, "vol": vol})

    return run


# ---------------------------------------------------------------------------- TrueSkill
def trueskill_1vs1(draw_probability: float | None = None, tau: float = 25.0 / 300.0) -> Forecaster:
    """TrueSkill with the package's defaults (mu 25, sigma 25/3, beta 25/6) and dynamics ``tau``.

    ``p = Phi((mu_a - mu_b) / sqrt(2 beta^2 + sigma_a^2 + sigma_b^2))``. The draw probability is
    the share of draws before the test window unless given. The rating reported for drift is mu.
    """

    def run(table: MatchTable, split: Split) -> Forecast:
        draws = draw_probability
        if draws is None:
            draws = float(np.mean(table.y[: split.test_start] == 0.5))
        env = trueskill.TrueSkill(draw_probability=draws, tau=tau)
        ratings = [env.create_rating() for _ in range(table.n_players)]
        n = len(table)
        p = np.empty(n)
        ra = np.empty(n)
        rb = np.empty(n)
        two_beta2 = 2.0 * env.beta**2
        for i, (a, b, y) in enumerate(zip(table.a.tolist(), table.b.tolist(), table.y.tolist(), strict=True)):
            x, z = ratings[a], ratings[b]
            p[i] = env.cdf((x.mu - z.mu) / math.sqrt(two_beta2 + x.sigma**2 + z.sigma**2))
            ra[i], rb[i] = x.mu, z.mu
            if y == 0.5:
                ratings[a], ratings[b] = trueskill.rate_1vs1(x, z, drawn=True, env=env)
            elif y == 1.0:
                ratings[a], ratings[b] = trueskill.rate_1vs1(x, z, env=env)
            else:
                ratings[b], ratings[a] = trueskill.rate_1vs1(z, x, env=env)
        final = np.array([r.mu for r in ratings])
        return Forecast("trueskill", p, ra, rb, final, env.mu, {"draw_probability": draws, "tau": tau})

    return run


# ---------------------------------------------------------------------------- OpenSkill
def openskill_pl(tau: float = 25.0 / 300.0) -> Forecaster:
    """OpenSkill's Plackett-Luce model with its defaults and dynamics ``tau``; ``p`` from ``predict_win``."""

    def run(table: MatchTable, split: Split) -> Forecast:
        model = PlackettLuce(tau=tau)
        ratings = [model.rating() for _ in range(table.n_players)]
        n = len(table)
        p = np.empty(n)
        ra = np.empty(n)
        rb = np.empty(n)
        for i, (a, b, y) in enumerate(zip(table.a.tolist(), table.b.tolist(), table.y.tolist(), strict=True)):
            x, z = ratings[a], ratings[b]
            p[i] = model.predict_win([[x], [z]])[0]
            ra[i], rb[i] = x.mu, z.mu
            ranks = [1.0, 1.0] if y == 0.5 else [1.0, 2.0] if y == 1.0 else [2.0, 1.0]
            [[ratings[a]], [ratings[b]]] = model.rate([[x], [z]], ranks=ranks)
        final = np.array([r.mu for r in ratings])
        return Forecast("openskill (plackett-luce)", p, ra, rb, final, model.mu, {"tau": tau})

    return run


#: Grids of the dynamics constants tried by ``peer_forecasters(tune=True)``.
GLICKO2_GRID: tuple[dict[str, Any], ...] = tuple(
    {"vol": vol, "period_days": days} for days in (1, 7, 30) for vol in (0.06, 0.15, 0.3)
)
TRUESKILL_GRID: tuple[dict[str, Any], ...] = tuple({"tau": tau} for tau in (25 / 300, 0.25, 0.5, 1.0))
OPENSKILL_GRID: tuple[dict[str, Any], ...] = tuple({"tau": tau} for tau in (25 / 300, 0.25, 0.5, 1.0))


def peer_forecasters(tune: bool = False, strong: bool = True, strong_from: int = 0) -> list[Forecaster]:
    """The systems ``backtest --compare`` runs beside the Sedma rules, cheapest first.

    Plain Elo's K is always tuned on the validation window, and so are WHR's ``w2`` and
    kickscore's kernel (``strong``; run on the matches from ``strong_from`` on when above 0, see
    :func:`sedma_elo.analysis.whole_history.later_slice`). With ``tune`` the dynamics of Glicko-2
    (starting volatility, rating period), TrueSkill and OpenSkill (tau) are too, from the small
    grids above (slow: each grid point is a replay of the history before the test window).
    """
    if not tune:
        out = [elo(32.0), tuned_elo(), glicko2_weekly(), trueskill_1vs1(), openskill_pl()]
    else:
        out = [
            elo(32.0),
            tuned_elo(),
            tuned("glicko-2", glicko2_weekly, GLICKO2_GRID),
            tuned("trueskill", trueskill_1vs1, TRUESKILL_GRID),
            tuned("openskill", openskill_pl, OPENSKILL_GRID),
        ]
    if strong:
        for peer in (
            tuned("whr", whr_periodic, WHR_GRID),
            tuned(
                "kickscore",
                lambda var: kickscore_periodic(
                    var=var, refit_every=2000, max_iter=2, sweeps="recent", first_block=None
                ),
                KICKSCORE_GRID,
            ),
        ):
            out.append(later_slice(peer, strong_from) if strong_from > 0 else peer)
    return out
