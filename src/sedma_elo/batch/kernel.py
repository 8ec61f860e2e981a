"""The compiled batch kernel: replays one-against-one histories with any :class:`~sedma_elo.core.rules.Rules`.

The results equal a loop of :func:`sedma_elo.core.engine.rate` bit for bit (tests check every golden
vector and random histories under every rule variant). The rules reach the compiled loop as flat
arrays built in one place, :func:`kernel_params`, in the layout derived from the coefficient
declarations (:data:`LAYOUT`). numba is imported on first use only, so that
importing :mod:`sedma_elo` stays fast; the compiled code is cached on disk (``cache=True``).

Memory is linear in players + matches: the ratings and games-played arrays, a table of expected
scores for every integer rating difference (1.6 MB), and, when recording, four numbers a match.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.coefficients import COEFFICIENTS, Coefficient
from ..core.rules import MAX_RATING, MIN_RATING, Rules, value_of
from ..errors import ValidationError
from .history import HistoryArrays

__all__ = [
    "LAYOUT",
    "KernelLayout",
    "KernelParams",
    "KernelRecord",
    "kernel_params",
    "load_kernel",
    "run_kernel",
]

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


@dataclass(frozen=True)
class KernelLayout:
    """Where each coefficient sits in the kernel's parameter arrays, derived from the declarations.

    ``p32`` (float32) holds the ``score`` coefficients, then the base score of a win, a loss and
    a draw (at ``base``), then the share of their bonuses a winner, a loser and a drawing player
    keep (at ``scale``). ``p64`` holds the same values in float64 followed by the ``float``
    coefficients. ``ints`` holds the ``int`` coefficients (a choice as its index, a bool as 0/1,
    ``None`` as the declaration's ``kernel_none``), then whether the margin is on and the rating
    range. ``slot[key]`` is the index of TOML key ``key`` in its array.
    """

    score: tuple[str, ...]
    floats: tuple[str, ...]
    ints: tuple[str, ...]
    slot: Mapping[str, int]
    base: int
    scale: int
    margin_on: int
    low: int
    high: int

    @classmethod
    def of(cls, coefficients: tuple[Coefficient, ...]) -> KernelLayout:
        """The layout of ``coefficients`` (in declaration order within each array)."""
        score = tuple(c.key for c in coefficients if c.kernel == "score")
        floats = tuple(c.key for c in coefficients if c.kernel == "float")
        ints = tuple(c.key for c in coefficients if c.kernel == "int")
        slot = {key: i for i, key in enumerate(score)}
        base = len(score)
        slot |= {key: base + 6 + i for i, key in enumerate(floats)}
        slot |= {key: i for i, key in enumerate(ints)}
        n = len(ints)
        return cls(score, floats, ints, slot, base, base + 3, n, n + 1, n + 2)


#: The layout of :data:`~sedma_elo.core.coefficients.COEFFICIENTS` (read by the compiled loop).
LAYOUT = KernelLayout.of(COEFFICIENTS)


def _kernel_value(c: Coefficient, value: Any) -> float:
    if value is None:
        return c.kernel_none
    if c.kind == "choice":
        return c.choices.index(value)
    return int(value) if c.kind == "bool" else value


def kernel_params(rules: Rules) -> KernelParams:
    """Flatten ``rules`` for the compiled loop as :data:`LAYOUT` says (the one map of rules to numbers)."""
    values = {c.key: _kernel_value(c, value_of(rules, c.attr)) for c in COEFFICIENTS if c.kernel}
    score = [values[key] for key in LAYOUT.score]
    loser, draw = values["bonus.loser_scale"], values["bonus.draw_scale"]
    # base score of a win, a loss, a draw; share of the bonuses kept by a winner, a loser, a drawing player
    score += [1.0, 0.0, 0.5, 1.0, loser, draw]
    ints = [int(values[key]) for key in LAYOUT.ints] + [int(rules.uses_margin), MIN_RATING, MAX_RATING]
    bounds, ks = rules.tier_table
    return KernelParams(
        tier_below=np.array(bounds, dtype=np.int64),
        tier_k=np.array(ks, dtype=np.int64),
        # np.float32() rounds to nearest like C#'s float constants and the engine's f32().
        p32=np.array(score, dtype=np.float64).astype(np.float32),
        p64=np.array(score + [values[key] for key in LAYOUT.floats], dtype=np.float64),
        ints=np.array(ints, dtype=np.int64),
        k_games=(
            float(rules.k_games_a),
            float(rules.k_games_b),
            float(rules.k_games_c),
            float(rules.k_games_min),
        ),
    )


#: Modules numba loads as it starts that the kernel never uses: coverage (``import numba``:
#: ``numba.misc.coverage_support``, to report compiled lines to a running coverage) and scipy's
#: BLAS (its CPU target's start: ``numba.np.arraymath`` probes it once, for ``np.correlate``'s inner
#: product; ``np.dot`` and ``np.linalg`` import it themselves when they are compiled). 16 MB of
#: the ``verify`` process's 200 MB before its first row (docs/service-measurements.md, "Verify's
#: fixed memory").
UNUSED_BY_NUMBA = ("coverage", "scipy", "scipy.linalg.cython_blas")


@contextmanager
def _absent(names: tuple[str, ...]) -> Iterator[list[str]]:
    """For the block, each of ``names`` not imported yet is absent: importing it raises
    ``ImportError`` (``None`` in :data:`sys.modules`, the import system's own mark), as if it were
    not installed. Yields the names hidden; afterwards they import as before."""
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield hidden
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


@lru_cache(maxsize=1)
def _jit() -> Any:
    """The compiled module; numba, if this imports it, starts without :data:`UNUSED_BY_NUMBA`."""
    with _absent(UNUSED_BY_NUMBA):
        from . import _kernel_jit

        # numba's CPU target starts at the first compiled call, a load from the disk cache too:
        # here, inside the block (the table's one signature, so nothing more is loaded).
        _kernel_jit.expected_table(0)
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

    Every update is kept in ``[MIN_RATING, MAX_RATING]`` (and at or above the rules' floor), as
    :func:`~sedma_elo.core.engine.rate` keeps it.

    Raises:
        ValidationError: a starting rating is outside ``[MIN_RATING, MAX_RATING]``, as
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
        if 8 * n < size:
            # A short run among many players (a ledger chunk's run between two team matches): a
            # bound from the run's own players, not two counts over every player (1 M players: 5 ms
            # a run, most of a league's verify). The entries below any bound are the same.
            starts = max(games[history.player_a].max(initial=0), games[history.player_b].max(initial=0))
            top = int(starts) + n + 1
        else:
            appearances = np.bincount(history.player_a, minlength=size) + np.bincount(
                history.player_b, minlength=size
            )
            top = int((games + appearances).max(initial=0)) + 1
        if rules.newcomer_balance_games:
            top = max(top, rules.k_new_player_games + 1)  # the settled K at new_player_games games
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


def load_kernel(part_done: Callable[[], object] | None = None) -> None:
    """Load every compiled function :func:`run_kernel` runs (from numba's disk cache; compiled on a
    cold one), so that numba's compiler, LLVM, runs here and not in a later call with the same
    argument types: one-against-one rows as the ledger's bulk path and the history files give
    them. ``part_done()`` is called after each part (numba's import, its CPU target's start, the
    functions), the last time when the compiler has done its work for the kernel. ``verify`` calls
    this before its first chunk is read, so that the compiler's peak does not add to a chunk's
    (and ``sedma-elo verify`` drops the compiler's pages after each part: :mod:`sedma_elo.cli.heap`).
    """
    done = part_done if part_done is not None else (lambda: None)
    with _absent(UNUSED_BY_NUMBA):
        import numba  # noqa: F401  (the first part: LLVM's library loaded and initialised)
    done()
    jit = _jit()
    done()
    _expected_table()
    jit.k_games_table(1, 1.0, 1.0, 1.0, 0.0)  # the rules' games-played curve: an int and 4 floats
    one = HistoryArrays(
        player_ids=["a", "b"],
        player_a=np.zeros(1, dtype=np.int32),
        player_b=np.ones(1, dtype=np.int32),
        winner=np.zeros(1, dtype=np.int8),
        counts=np.zeros((1, 8), dtype=np.int32),
        match_ids=[""],
        played_at=[""],
        lines=np.zeros(1, dtype=np.int64),
    )
    rules = Rules()
    ratings = np.full(2, rules.initial_rating, dtype=np.int64)
    run_kernel(one, rules, ratings, np.zeros(2, dtype=np.int64), record=True)
    done()
