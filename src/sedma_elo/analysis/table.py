"""The columnar view of a history that the analysis works on: who played whom, when, and the result.

Every forecaster (the Sedma rules and each peer system) reads this one table, so they all see the
same matches in the same order and are scored on the same split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime

import numpy as np
import numpy.typing as npt

from ..batch.history import DRAW, WINNER_A, HistoryArrays
from ..core.model import Match
from ..errors import ValidationError

__all__ = ["MatchTable", "table_from_history", "table_from_matches"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

_EPOCH = date(1970, 1, 1)


@dataclass(frozen=True, eq=False)
class MatchTable:
    """One-against-one matches, oldest first.

    Attributes:
        a, b: index into ``players`` of side a and side b of each match.
        y: outcome of side a (1.0 win, 0.0 loss, 0.5 draw).
        day: day of the match (days since 1970-01-01); the match's position when it has no date.
        players: player ids; ``players[a[i]]`` played side a of match ``i``.
        history: the columnar history the table was built from (what the Sedma rules replay).
    """

    a: IntArray
    b: IntArray
    y: FloatArray
    day: IntArray
    players: tuple[str, ...]
    history: HistoryArrays | None = None

    def __len__(self) -> int:
        return int(self.y.size)

    def head(self, n: int) -> MatchTable:
        """The first ``n`` matches (same player index, so ratings stay comparable)."""
        history = None
        if self.history is not None:
            h = self.history
            history = HistoryArrays(
                player_ids=h.player_ids,
                player_a=h.player_a[:n],
                player_b=h.player_b[:n],
                winner=h.winner[:n],
                counts=h.counts[:n],
                match_ids=h.match_ids[:n],
                played_at=h.played_at[:n],
                lines=h.lines[:n],
            )
        return MatchTable(self.a[:n], self.b[:n], self.y[:n], self.day[:n], self.players, history)

    @property
    def n_players(self) -> int:
        """Number of distinct players."""
        return len(self.players)


def _day(played_at: datetime | None, position: int) -> int:
    if played_at is None:
        return position
    return (played_at.date() - _EPOCH).days


def table_from_matches(matches: Sequence[Match]) -> MatchTable:
    """Build a :class:`MatchTable` from one-against-one matches in playing order.

    Raises:
        ValidationError: a team match (field ``team_a``, the analysis compares one-against-one
            systems) or an empty history (field ``history``).
    """
    if not matches:
        raise ValidationError("history", "is empty: there is nothing to analyse")
    for i, m in enumerate(matches):
        if len(m.team_a) != 1:
            where = f"match {m.match_id}" if m.match_id else f"match {i + 1}"
            raise ValidationError("team_a", f"{where}: the analysis handles one-against-one matches only")
    table = table_from_history(HistoryArrays.from_matches(matches))
    # Dates of Match objects are datetimes; matches without one are placed by position.
    day = np.array([_day(m.played_at, i) for i, m in enumerate(matches)], dtype=np.int64)
    return replace(table, day=day)


def table_from_history(history: HistoryArrays) -> MatchTable:
    """Build a :class:`MatchTable` from the columnar history of :func:`sedma_elo.batch.history.load_history`.

    Raises:
        ValidationError: an empty history (field ``history``).
    """
    n = len(history)
    if n == 0:
        raise ValidationError("history", "is empty: there is nothing to analyse")
    w = history.winner
    y = np.where(w == WINNER_A, 1.0, np.where(w == DRAW, 0.5, 0.0)).astype(np.float64)
    texts = [t[:10] for t in history.played_at]
    if all(texts):
        day = np.array(texts, dtype="datetime64[D]").astype(np.int64)
    else:
        day = np.arange(n, dtype=np.int64)
    return MatchTable(
        history.player_a.astype(np.int64),
        history.player_b.astype(np.int64),
        y,
        day,
        tuple(history.player_ids),
        history,
    )
