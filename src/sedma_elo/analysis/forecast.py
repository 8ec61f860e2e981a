"""What every rating system hands to the backtest: its forecast of each match before it was played.

A *forecaster* is any function ``(table, split) -> Forecast``. The split is passed so that a system
with a free constant (plain Elo's K) can tune it on the validation window, and only there; the
forecaster must never look at outcomes of the test window except to update ratings *after*
predicting each match, exactly as a live system would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .metrics import Split
from .table import MatchTable

__all__ = ["Drift", "Forecast", "Forecaster", "rating_drift", "rating_quantiles"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Forecast:
    """Per-match forecasts of one system over a whole history.

    Attributes:
        system: a short name for tables, e.g. ``"elo(k=24)"``.
        p: probability that side a wins match ``i``, computed from the ratings before it.
        rating_a, rating_b: the ratings before each match on the system's own scale (``None`` when
            the system has no single rating number); used for the drift figures.
        final: each player's rating after the last match (index as in ``table.players``).
        initial_rating: the rating of a new player on the same scale.
        params: the constants the system used (tuned or fixed), for the report.
    """

    system: str
    p: FloatArray
    rating_a: FloatArray | None = None
    rating_b: FloatArray | None = None
    final: FloatArray | None = None
    initial_rating: float | None = None
    params: Mapping[str, float | str] = field(default_factory=dict)


Forecaster = Callable[[MatchTable, Split], Forecast]


@dataclass(frozen=True, slots=True)
class Drift:
    """Rating drift over the test window (ratings on the system's own scale).

    Attributes:
        mean_start: mean rating, at the start of the window, of the players who had played before it.
        mean_end: mean rating after the last match of every player seen in the whole history.
        players_start, players_end: how many players each mean is over.
        above_initial, below_initial: players whose final rating is above / below a new player's.
        gained, lost: of the players rated at the window start, how many ended above / below the
            rating they had then.
    """

    mean_start: float
    mean_end: float
    players_start: int
    players_end: int
    above_initial: int
    below_initial: int
    gained: int
    lost: int


def _ratings_at(
    table: MatchTable, forecast: Forecast, start: int
) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Players who played before ``start`` and their rating at that moment."""
    assert forecast.rating_a is not None and forecast.rating_b is not None and forecast.final is not None
    seen = np.unique(np.concatenate([table.a[:start], table.b[:start]]))
    rating = forecast.final[seen].copy()
    n = len(table)
    if start < n:
        # A player's rating at `start` is the pre-match rating of their first match at or after it.
        who = np.concatenate([table.a[start:], table.b[start:]])
        val = np.concatenate([forecast.rating_a[start:], forecast.rating_b[start:]])
        pos = np.concatenate([np.arange(start, n), np.arange(start, n)])
        order = np.argsort(pos, kind="stable")
        first_players, first_at = np.unique(who[order], return_index=True)
        lookup = dict(zip(first_players.tolist(), val[order][first_at].tolist(), strict=True))
        for i, player in enumerate(seen.tolist()):
            if player in lookup:
                rating[i] = lookup[player]
    return seen, rating


def rating_drift(table: MatchTable, forecast: Forecast, split: Split) -> Drift | None:
    """Drift of ``forecast``'s ratings over the test window of ``split``; ``None`` without ratings."""
    if forecast.rating_a is None or forecast.final is None or forecast.initial_rating is None:
        return None
    seen, start_ratings = _ratings_at(table, forecast, split.test_start)
    everyone = np.unique(np.concatenate([table.a, table.b]))
    end = forecast.final[everyone]
    end_of_seen = forecast.final[seen]
    init = forecast.initial_rating
    return Drift(
        mean_start=float(start_ratings.mean()),
        mean_end=float(end.mean()),
        players_start=int(seen.size),
        players_end=int(everyone.size),
        above_initial=int((end > init).sum()),
        below_initial=int((end < init).sum()),
        gained=int((end_of_seen > start_ratings).sum()),
        lost=int((end_of_seen < start_ratings).sum()),
    )


def rating_quantiles(
    table: MatchTable,
    forecast: Forecast,
    points: int = 20,
    quantiles: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 0.9),
) -> list[dict[str, float]]:
    """The distribution of ratings over time: at ``points`` evenly spaced moments of the history,
    the mean and the ``quantiles`` of the ratings of every player seen so far.

    Returns one mapping per moment with keys ``match`` (its index), ``players``, ``mean`` and
    ``q10``, ``q25``... (percent of each quantile); empty when the system has no ratings.
    """
    if forecast.rating_a is None or forecast.final is None:
        return []
    n = len(table)
    out = []
    for at in sorted({max(1, round(n * (i + 1) / points)) for i in range(points)}):
        _, ratings = _ratings_at(table, forecast, at)
        row = {"match": float(at), "players": float(ratings.size), "mean": float(ratings.mean())}
        for q, v in zip(quantiles, np.quantile(ratings, quantiles), strict=True):
            row[f"q{round(q * 100)}"] = float(v)
        out.append(row)
    return out
