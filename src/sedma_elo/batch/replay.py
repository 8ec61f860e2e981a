"""Replay a whole match history: final ratings, games played and (optionally) every match's change.

:func:`replay` picks the compiled batch kernel (:mod:`sedma_elo.batch.kernel`) for large one-against-one
histories and the one fold over matches (:mod:`sedma_elo.core.fold`) otherwise (small inputs, team
matches); both give identical numbers, which the tests check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..core.engine import check_games_played
from ..core.fold import RatingState, fold
from ..core.model import Match, check_rating
from ..core.rules import REFERENCE_RULES, Rules
from ..errors import ValidationError
from .history import HistoryArrays, read_history
from .kernel import KernelRecord, run_kernel

__all__ = ["KERNEL_THRESHOLD", "ReplayResult", "replay", "replay_python"]

#: ``method="auto"`` uses the compiled kernel from this many matches on (below it, loading numba
#: costs more than the plain loop).
KERNEL_THRESHOLD = 20_000

Method = Literal["auto", "kernel", "python"]
Source = str | Path | HistoryArrays | Sequence[Match]


@dataclass(frozen=True, eq=False)
class ReplayResult:
    """The outcome of :func:`replay`.

    Attributes:
        rules: the rules used.
        player_ids: every player: those of the history in order of first appearance, then those
            only in ``initial_ratings``.
        rating_array: int64 final rating of each player of ``player_ids``.
        games_array: int64 games played by each player, including ``initial_games_played``.
        played_array: int64 matches each player played in this replay.
        match_ids: the ids of the replayed matches, in order ("" where a match had none).
        player_a, player_b: int32 indices (into ``player_ids``) of each match's players.
        record: per-match ratings before/after and expected scores, when asked for.
    """

    rules: Rules
    player_ids: list[str]
    rating_array: npt.NDArray[np.int64]
    games_array: npt.NDArray[np.int64]
    played_array: npt.NDArray[np.int64]
    match_ids: list[str]
    player_a: npt.NDArray[np.int32]
    player_b: npt.NDArray[np.int32]
    record: KernelRecord | None = None

    @property
    def ratings(self) -> dict[str, int]:
        """Final rating by player id."""
        return dict(zip(self.player_ids, self.rating_array.tolist(), strict=True))

    @property
    def matches_played(self) -> dict[str, int]:
        """Matches played in this replay by player id."""
        return dict(zip(self.player_ids, self.played_array.tolist(), strict=True))

    @property
    def games_played(self) -> dict[str, int]:
        """Games played including ``initial_games_played``, by player id."""
        return dict(zip(self.player_ids, self.games_array.tolist(), strict=True))

    def table(self) -> list[tuple[str, int, int]]:
        """``(player_id, rating, matches_played)`` sorted by rating (highest first), then id."""
        rows = zip(self.player_ids, self.rating_array.tolist(), self.played_array.tolist(), strict=True)
        return sorted(rows, key=lambda row: (-row[1], row[0]))


def replay(
    source: Source,
    rules: Rules = REFERENCE_RULES,
    *,
    initial_ratings: Mapping[str, int] | None = None,
    initial_games_played: Mapping[str, int] | None = None,
    record: bool = False,
    method: Method = "auto",
    progress: Callable[[int, int], None] | None = None,
) -> ReplayResult:
    """Replay matches in order from the given starting point.

    Args:
        source: a history file path (read with :func:`~sedma_elo.batch.history.load_history`, bad rows
            raise), :class:`~sedma_elo.batch.history.HistoryArrays`, or a sequence of matches.
        rules: the rule set.
        initial_ratings: ratings before the first match (others start at ``rules.initial_rating``).
        initial_games_played: games played before the first match (others: 0); used by rules
            whose K depends on games played.
        record: keep every match's ratings before and after and expected scores (one-against-one
            histories only).
        method: ``kernel`` (compiled), ``python`` (the fold) or ``auto`` (the kernel
            for one-against-one histories of at least :data:`KERNEL_THRESHOLD` matches).
        progress: called as ``progress(done, total)`` while replaying (kernel: every 100,000).

    Raises:
        HistoryError: ``source`` is a file with a bad row.
        ValidationError: a bad initial rating or games count (field ``initial_ratings.<id>`` or
            ``initial_games_played.<id>``); a rating leaves ``[MIN_RATING, MAX_RATING]`` during the
            replay; ``record`` or ``method="kernel"`` with team matches.
    """
    history, matches = _resolve(source)
    starting = _check_mapping("initial_ratings", initial_ratings or {}, check_rating)
    starting_games = _check_mapping("initial_games_played", initial_games_played or {}, check_games_played)
    if history is None:
        assert matches is not None
        if method == "kernel" or record:
            raise ValidationError(
                "source", "team matches are replayed by the Python path only, without per-match records"
            )
        return _replay_matches(matches, rules, starting, starting_games, progress)
    use_kernel = method == "kernel" or (method == "auto" and len(history) >= KERNEL_THRESHOLD)
    order = dict.fromkeys(history.player_ids)
    order.update(dict.fromkeys(starting))
    order.update(dict.fromkeys(starting_games))
    player_ids = list(order)
    ratings = np.array([starting.get(p, rules.initial_rating) for p in player_ids], dtype=np.int64)
    games = np.array([starting_games.get(p, 0) for p in player_ids], dtype=np.int64)
    games_before = games.copy()
    if len(player_ids) != history.n_players:
        history = HistoryArrays(**{**history.__dict__, "player_ids": player_ids})
    if use_kernel:
        rec = run_kernel(history, rules, ratings, games, record=record, progress=progress)
    else:
        rec = _replay_arrays_python(history, rules, ratings, games, record, progress)
    return ReplayResult(
        rules=rules,
        player_ids=player_ids,
        rating_array=ratings,
        games_array=games,
        played_array=games - games_before,
        match_ids=history.match_ids,
        player_a=history.player_a,
        player_b=history.player_b,
        record=rec,
    )


def replay_python(
    matches: Sequence[Match],
    rules: Rules = REFERENCE_RULES,
    *,
    initial_ratings: Mapping[str, int] | None = None,
    initial_games_played: Mapping[str, int] | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """The oracle: ratings and games played after the fold (:class:`~sedma_elo.core.fold.RatingState`).

    Returns ``(ratings, games_played)`` by player id, for every player seen (and given).
    """
    state = RatingState.of(initial_ratings, initial_games_played)
    for _ in fold(matches, rules, state):
        pass
    return state.ratings, state.games


# ---------------------------------------------------------------------------- helpers
def _resolve(source: Source) -> tuple[HistoryArrays | None, Sequence[Match] | None]:
    if isinstance(source, HistoryArrays):
        return source, None
    if isinstance(source, (str, Path)):
        source = read_history(source)[0]
        if isinstance(source, HistoryArrays):
            return source, None
    matches = list(source)
    if all(len(m.team_a) == 1 for m in matches):
        return HistoryArrays.from_matches(matches), None
    return None, matches


def _check_mapping(
    name: str, values: Mapping[str, int], check: Callable[[str, object], int]
) -> dict[str, int]:
    return {pid: check(f"{name}.{pid}", value) for pid, value in values.items()}


_WINNERS: tuple[Literal["a", "b", "draw"], ...] = ("a", "b", "draw")


def _replay_arrays_python(
    history: HistoryArrays,
    rules: Rules,
    ratings: npt.NDArray[np.int64],
    games: npt.NDArray[np.int64],
    record: bool,
    progress: Callable[[int, int], None] | None,
) -> KernelRecord | None:
    """The kernel's contract implemented with the fold (for small inputs and as an oracle)."""
    n = len(history)
    rec = None
    if record:
        rec = KernelRecord(
            np.empty((n, 2), dtype=np.int64),
            np.empty((n, 2), dtype=np.int64),
            np.empty((n, 2), dtype=np.float64),
        )
    ids = history.player_ids
    state = RatingState(
        dict(zip(ids, ratings.tolist(), strict=True)), dict(zip(ids, games.tolist(), strict=True))
    )
    for i, result in enumerate(fold(history.to_matches() if n else [], rules, state)):
        if rec is not None:
            for side, change in enumerate(result.changes):
                rec.before[i, side] = change.rating_before
                rec.after[i, side] = change.rating_after
                rec.expected[i, side] = change.expected
        if progress is not None and (i + 1) % 10_000 == 0:
            progress(i + 1, n)
    ratings[:] = [state.ratings[p] for p in ids]
    games[:] = [state.games[p] for p in ids]
    if progress is not None:
        progress(n, n)
    return rec


def _replay_matches(
    matches: Sequence[Match],
    rules: Rules,
    starting: dict[str, int],
    starting_games: dict[str, int],
    progress: Callable[[int, int], None] | None,
) -> ReplayResult:
    ratings, games = replay_python(
        matches, rules, initial_ratings=starting, initial_games_played=starting_games
    )
    order: dict[str, None] = {}
    for m in matches:
        order.update(dict.fromkeys(m.players))
    order.update(dict.fromkeys(starting))
    order.update(dict.fromkeys(starting_games))
    ids = list(order)
    index = {p: i for i, p in enumerate(ids)}
    final_games = np.array([games.get(p, 0) for p in ids], dtype=np.int64)
    if progress is not None:
        progress(len(matches), len(matches))
    return ReplayResult(
        rules=rules,
        player_ids=ids,
        rating_array=np.array([ratings.get(p, rules.initial_rating) for p in ids], dtype=np.int64),
        games_array=final_games,
        played_array=final_games - np.array([starting_games.get(p, 0) for p in ids], dtype=np.int64),
        match_ids=[m.match_id or "" for m in matches],
        player_a=np.array([index[m.team_a[0]] for m in matches], dtype=np.int32),
        player_b=np.array([index[m.team_b[0]] for m in matches], dtype=np.int32),
    )
