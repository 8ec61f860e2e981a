"""The compiled batch kernel: replays one-against-one histories with any :class:`~sedma_elo.core.rules.Rules`.

The results equal a loop of :func:`sedma_elo.core.engine.rate` bit for bit (tests check every golden
vector and random histories under every rule variant). The rules reach the compiled loop as flat
arrays built in one place, :func:`kernel_params`. numba is imported on first use only, so that
importing :mod:`sedma_elo` stays fast; the compiled code is cached on disk (``cache=True``).

Memory is linear in players + matches: the ratings and games-played arrays, a table of expected
scores for every integer rating difference (1.6 MB), and, when recording, four numbers a match.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.rules import K_MODES, MAX_RATING, MIN_RATING, Rules
from ..errors import ValidationError
from .history import HistoryArrays

__all__ = ["KernelParams", "KernelRecord", "kernel_params", "run_kernel"]

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]

#: Matches per call of the compiled loop when a progress callback is given.
CHUNK = 100_000


@dataclass(frozen=True, eq=False)
class KernelParams:
    """The rules as the flat numbers the compiled loop reads (see :func:`kernel_params`)."""

    tier_below: Int64Array
    tier_k: Int64Array
    p32: npt.NDArray[np.float32]
    p64: Float64Array
    ints: Int64Array
    k_games: tuple[float, float, float, float]


@dataclass(frozen=True, eq=False)
class KernelRecord:
    """Per-match values of a replay; row ``i`` is match ``i``, column 0 side a, column 1 side b.

    Attributes:
        before, after: int64 ratings before and after the match, shape ``(n, 2)``.
        expected: float64 expected scores from the ratings before the match, shape ``(n, 2)``
            (column 0 is the win probability the rules give side a).
    """

    before: Int64Array
    after: Int64Array
    expected: Float64Array


def kernel_params(rules: Rules) -> KernelParams:
    """Flatten ``rules`` for the compiled loop: the single place that maps rules to numbers."""
    score = [
        rules.bonus_16.per_round,
        rules.bonus_16.cap,
        rules.bonus_24.per_round,
        rules.bonus_24.cap,
        rules.bonus_4_and_last.per_round,
        rules.bonus_4_and_last.cap,
        rules.malus_per_bad_move,
        rules.malus_cap,
        rules.loser_bonus_scale,
        rules.draw_bonus_scale,
        rules.score_min,
        rules.score_max,
        1.0,  # base score of a win, a loss, a draw
        0.0,
        0.5,
        1.0,  # share of the bonuses kept by a winner, a loser, a drawing player
        rules.loser_bonus_scale,
        rules.draw_bonus_scale,
    ]
    rest = [
        rules.k_new_player_multiplier,
        rules.margin_scale,
        rules.margin_weight_16,
        rules.margin_weight_24,
        rules.margin_weight_4_and_last,
        rules.margin_weight_bad_moves,
        rules.margin_min,
        rules.margin_max,
    ]
    ints = [
        int(rules.arithmetic == "float32"),
        int(rules.rounding == "half_up"),
        K_MODES.index(rules.k_mode),
        rules.k_new_player_games,
        int(rules.zero_sum),
        int(rules.rating_floor is not None),
        rules.rating_floor if rules.rating_floor is not None else 0,
        int(rules.uses_margin),
        MIN_RATING,
        MAX_RATING,
    ]
    return KernelParams(
        tier_below=np.array([t.below for t in rules.k_tiers], dtype=np.int64),
        tier_k=np.array([t.k for t in rules.k_tiers] + [rules.k_top], dtype=np.int64),
        # np.float32() rounds to nearest like C#'s float constants and the engine's f32().
        p32=np.array(score, dtype=np.float64).astype(np.float32),
        p64=np.array(score + rest, dtype=np.float64),
        ints=np.array(ints, dtype=np.int64),
        k_games=(
            float(rules.k_games_a),
            float(rules.k_games_b),
            float(rules.k_games_c),
            float(rules.k_games_min),
        ),
    )


def _jit() -> Any:
    from . import _kernel_jit

    return _kernel_jit


@lru_cache(maxsize=1)
def _expected_table() -> Float64Array:
    table: Float64Array = _jit().expected_table(MAX_RATING - MIN_RATING)
    table.setflags(write=False)
    return table


def run_kernel(
    history: HistoryArrays,
    rules: Rules,
    ratings: Int64Array,
    games: Int64Array,
    *,
    record: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> KernelRecord | None:
    """Replay ``history`` under ``rules``, updating ``ratings`` and ``games`` (by player index) in place.

    Args:
        history: the matches; player indices refer to ``ratings`` and ``games``.
        rules: any rule set.
        ratings: int64 ratings before the first match, one per player (updated in place).
        games: int64 games played before the first match, one per player (updated in place).
        record: also return every match's ratings before and after and its expected scores.
        progress: called as ``progress(done, total)`` after every :data:`CHUNK` matches.

    Raises:
        ValidationError: a rating is outside ``[MIN_RATING, MAX_RATING]`` before a match, as
            :func:`~sedma_elo.core.engine.rate` would raise (field ``ratings.<player_id>``); the
            ratings then hold the state just before that match.
    """
    n = len(history)
    if ratings.dtype != np.int64 or games.dtype != np.int64:
        raise TypeError("ratings and games must be int64 arrays")
    if ratings.shape != (history.n_players,) or games.shape != (history.n_players,):
        raise ValueError("ratings and games need one entry per player of the history")
    params = kernel_params(rules)
    jit = _jit()
    if rules.uses_games_played:
        # One entry per games count any player can reach: their start plus their matches here.
        size = history.n_players
        appearances = np.bincount(history.player_a, minlength=size) + np.bincount(
            history.player_b, minlength=size
        )
        top = int((games + appearances).max(initial=0)) + 1
        k_games = jit.k_games_table(top, *params.k_games)
    else:
        k_games = np.zeros(1, dtype=np.float64)
    if record:
        rec = KernelRecord(
            np.empty((n, 2), dtype=np.int64),
            np.empty((n, 2), dtype=np.int64),
            np.empty((n, 2), dtype=np.float64),
        )
    else:
        dummy_i, dummy_f = np.empty((0, 2), dtype=np.int64), np.empty((0, 2), dtype=np.float64)
    table = _expected_table()
    step = CHUNK if progress is not None else max(n, 1)
    for start in range(0, n, step):
        stop = min(start + step, n)
        window = slice(start, stop)
        outs = (
            (rec.before[window], rec.after[window], rec.expected[window])
            if record
            else (dummy_i, dummy_i, dummy_f)
        )
        failed = jit.replay_loop(
            history.player_a[window],
            history.player_b[window],
            history.winner[window],
            history.counts[window],
            ratings,
            games,
            params.tier_below,
            params.tier_k,
            params.p32,
            params.p64,
            params.ints,
            table,
            k_games,
            record,
            *outs,
        )
        if failed >= 0:
            i, side = start + failed // 2, failed % 2
            index = int((history.player_a if side == 0 else history.player_b)[i])
            pid = history.player_ids[index]
            raise ValidationError(
                f"ratings.{pid}",
                f"must be within [{MIN_RATING}, {MAX_RATING}], got {int(ratings[index])}"
                f" (before match {history.match_ids[i]!r}, number {i + 1})",
            )
        if progress is not None:
            progress(stop, n)
    return rec if record else None
