"""The verdict on one move: does it lower what the round is worth to the mover's side?

Values are those of :mod:`.value` (the round's signed stake under perfect play, in match points).

* **Exact** (two players, stock empty: every card is known): the move is bad when its value is
  lower than the best move's value.
* **All deals** (hidden cards, few of them): when the deals of the unseen cards, up to suits, number
  at most ``max_listed``, every one is solved, weighted by how many card deals it stands for; the
  move is bad when it loses value in more than ``share`` of them (by weight) and its mean value is
  lower. No sampling, so no seed and no noise.
* **Sampled** (hidden cards, too many deals to list): the unseen cards are dealt at random,
  consistently with what the mover has seen, and every candidate is solved exactly in each deal.
  The alternative is the move with the best mean value; the played move *loses value* in a deal
  when that alternative is worth more there. The move is bad when it loses value in more than
  ``share`` of the deals (default: more often than not) *with confidence* (an exact one-sided
  binomial test, i.e. the Clopper-Pearson bound, at level ``1 - confidence`` split over the looks
  by Bonferroni) and its mean value is lower. Deals are added (``min_deals``, doubled at each look
  up to ``max_deals``) until the share is decided either way; a move still open at the cap is not
  bad. A sampled move found bad, or still open at the cap, is judged again over all deals when they
  number at most ``max_listed_close``: near the threshold a sample's verdict would depend on the
  seed, so only the clear "not bad" verdicts (the cheap, common case) stay sampled.

Every deal depends only on the move's seed and its index, so a verdict is a function of the record,
the move and the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import exp, lgamma, log
from typing import Literal

import numpy as np
import numpy.typing as npt

from .solver import Solver
from .state import RoundState
from .value import Stakes, ValueSolver, deal_classes, move_key

__all__ = ["Method", "Verdict", "judge_exact", "judge_sampled", "looks"]

Method = Literal["exact", "all deals", "sampled"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judgement of one move (values in match points for the mover's side).

    Attributes:
        method: ``exact`` or ``sampled``.
        bad: whether the move lowers the value (sampled: decided with confidence).
        played: the move's key (rank, ``-1`` for stop).
        better: the keys of the best moves (exact: every move of the best value; sampled: the
            alternative with the best mean value). Empty when the played move is itself best.
        value_played, value_better: the (mean) values of the played move and of ``better``.
        share: the share of deals in which the played move loses value (exact: 0 or 1).
        deals: how many deals were solved (exact: 1).
        points_lost: exact only: aces and tens (last trick = 0.5) lost against the best move for
            points, a detail; ``None`` when sampled.
    """

    method: Method
    bad: bool
    played: int
    better: tuple[int, ...]
    value_played: float
    value_better: float
    share: float
    deals: int
    points_lost: float | None


def judge_exact(
    state: RoundState, played: int, stakes: Stakes, values: ValueSolver, points: Solver
) -> Verdict:
    """The exact verdict on ``played`` (a move) in a two-player position with an empty stock."""
    v = values.exact(state, stakes)
    key = move_key(played)
    top = max(v.values())
    better = tuple(k for k, x in v.items() if x == top) if v[key] < top else ()
    half = points.move_values(state)
    best_half = max(half.values())
    return Verdict(
        "exact",
        v[key] < top,
        key,
        better,
        float(v[key]),
        float(top),
        1.0 if v[key] < top else 0.0,
        1,
        (best_half - half[played]) / 2,
    )


@lru_cache(maxsize=4096)
def _bounds(n: int, share: float, alpha: float) -> tuple[int, int]:
    """``(k_bad, k_good)``: the move is bad when it loses value in at least ``k_bad`` of ``n`` deals
    (P[Bin(n, share) >= k_bad] <= alpha), decidedly not bad in at most ``k_good``
    (P[Bin(n, share) <= k_good] <= alpha; -1 when no count is that low)."""
    # In logarithms: comb(n, j) overflows a float from n = 1030 on.
    ls, lf, ln = log(share), log(1 - share), lgamma(n + 1)
    pmf = [exp(ln - lgamma(j + 1) - lgamma(n - j + 1) + j * ls + (n - j) * lf) for j in range(n + 1)]
    k_bad, tail = n + 1, 0.0
    for j in range(n, -1, -1):
        tail += pmf[j]
        if tail > alpha:
            break
        k_bad = j
    k_good, head = -1, 0.0
    for j in range(n + 1):
        head += pmf[j]
        if head > alpha:
            break
        k_good = j
    return k_bad, k_good


def looks(min_deals: int, max_deals: int) -> list[int]:
    """The deal counts at which the sampled test looks: ``min_deals``, doubling, ending at ``max_deals``."""
    out = [min_deals]
    while out[-1] < max_deals:
        out.append(min(2 * out[-1], max_deals))
    return out


def _all_deals(
    state: RoundState,
    stakes: Stakes,
    values: ValueSolver,
    listed: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]],
    cands: list[int],
    col: int,
    share: float,
) -> Verdict:
    """The verdict over every listed deal, each weighted by the card deals it stands for."""
    deals, weights = listed
    table = values.listed(state, stakes, deals)
    total = float(weights.sum())
    means = (weights @ table) / total
    alt = max((j for j in range(len(cands)) if j != col), key=lambda j: (means[j], -j))
    share_lost = float(weights[table[:, alt] > table[:, col]].sum()) / total
    return Verdict(
        "all deals",
        share_lost > share and means[alt] > means[col],
        cands[col],
        (cands[alt],) if means[alt] > means[col] else (),
        float(means[col]),
        float(means[alt]),
        share_lost,
        round(total),
        None,
    )


def judge_sampled(
    state: RoundState,
    played: int,
    stakes: Stakes,
    values: ValueSolver,
    seed: int,
    *,
    share: float,
    confidence: float,
    min_deals: int,
    max_deals: int,
    max_listed: int = 0,
    max_listed_close: int = 0,
) -> Verdict:
    """The verdict on ``played`` with hidden cards: over all deals when they are few (at most
    ``max_listed`` up to suits), else sampled (see the module docstring); ``seed`` fixes the deals.
    A sampled verdict that is bad, or still open at ``max_deals``, is redone over all deals when
    they number at most ``max_listed_close``: only "decidedly not bad" stays a sampled verdict."""
    cands = values.candidates(state)
    key = move_key(played)
    col = cands.index(key)
    listed = deal_classes(state, max_listed) if max_listed > 0 else None
    if listed is not None:
        return _all_deals(state, stakes, values, listed, cands, col, share)
    plan = looks(min_deals, max_deals)
    alpha = (1 - confidence) / len(plan)
    table = np.empty((0, len(cands)), dtype=np.int64)
    for n in plan:
        more = values.sampled(state, stakes, seed, table.shape[0], n - table.shape[0])
        table = np.concatenate([table, more])
        means = table.mean(axis=0)
        alt = max((j for j in range(len(cands)) if j != col), key=lambda j: (means[j], -j))
        losses = int(np.count_nonzero(table[:, alt] > table[:, col]))
        k_bad, k_good = _bounds(n, share, alpha)
        decided_bad = losses >= k_bad and means[alt] > means[col]
        if decided_bad or losses <= k_good or n == plan[-1]:
            break
    if (decided_bad or losses > k_good) and max_listed_close > max_listed:
        # Bad, or still open at the cap (a share close to the threshold): here a sample's verdict
        # could depend on the seed. Solve every deal instead when they are not too many.
        close = deal_classes(state, max_listed_close)
        if close is not None:
            return _all_deals(state, stakes, values, close, cands, col, share)
    return Verdict(
        "sampled",
        decided_bad,
        key,
        (cands[alt],) if means[alt] > means[col] else (),
        float(means[col]),
        float(means[alt]),
        losses / n,
        n,
        None,
    )
