"""The history's columns and :class:`HistoryArrays`, the form the batch kernel replays."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from ...core.model import (
    Match,
    PlayerStats,
)
from ...errors import ValidationError

#: The CSV columns, in the order :func:`write_matches` writes them.
COLUMNS = (
    "match_id",
    "played_at",
    "player_a",
    "player_b",
    "winner",
    "bad_moves_a",
    "bad_moves_b",
    "won_by_16_a",
    "won_by_16_b",
    "won_by_24_a",
    "won_by_24_b",
    "won_by_4_and_last_a",
    "won_by_4_and_last_b",
)
#: The columns of :attr:`HistoryArrays.counts`, in order.
COUNT_COLUMNS = COLUMNS[5:]
#: Codes of :attr:`HistoryArrays.winner`.
WINNER_A, WINNER_B, DRAW = 0, 1, 2
_WINNER_CODES = {"a": WINNER_A, "b": WINNER_B, "draw": DRAW}
_WINNER_NAMES = ("a", "b", "draw")
_TEAM_KEYS = ("match_id", "played_at", "team_a", "team_b", "winner", "stats")
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
_GZIP_MAGIC = b"\x1f\x8b"

Int32Array = npt.NDArray[np.int32]
Int8Array = npt.NDArray[np.int8]


@dataclass(frozen=True, eq=False)
class HistoryArrays:
    """A one-against-one match history as columns (what the batch kernel replays).

    Attributes:
        player_ids: the distinct player ids; index ``i`` of the arrays below means ``player_ids[i]``.
        player_a, player_b: int32 player indices, one per match, in file order.
        winner: int8 codes :data:`WINNER_A` (0), :data:`WINNER_B` (1) or :data:`DRAW` (2).
        counts: int32 array of shape ``(n, 8)``, the columns of :data:`COUNT_COLUMNS`.
        match_ids: the match ids, in file order.
        played_at: the ``played_at`` text of every match as written in the file (ISO 8601).
        lines: int64 1-based line number of every match in its file (0 when built from objects).
    """

    player_ids: Sequence[str]
    player_a: Int32Array
    player_b: Int32Array
    winner: Int8Array
    counts: Int32Array
    match_ids: list[str]
    played_at: list[str]
    lines: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.match_ids)

    def part(self, rows: slice) -> HistoryArrays:
        """The matches in ``rows`` (a slice of the file order), with the same players."""
        return HistoryArrays(
            player_ids=self.player_ids,
            player_a=self.player_a[rows],
            player_b=self.player_b[rows],
            winner=self.winner[rows],
            counts=np.ascontiguousarray(self.counts[rows]),
            match_ids=self.match_ids[rows],
            played_at=self.played_at[rows],
            lines=self.lines[rows],
        )

    @property
    def n_players(self) -> int:
        """Number of distinct players."""
        return len(self.player_ids)

    def player_index(self) -> dict[str, int]:
        """Player id to its index in the arrays."""
        return {p: i for i, p in enumerate(self.player_ids)}

    def played_at_datetimes(self) -> list[datetime | None]:
        """``played_at`` parsed with :meth:`datetime.fromisoformat` (a date alone is midnight; "" is None)."""
        cache: dict[str, datetime | None] = {"": None}
        out = []
        for text in self.played_at:
            if text not in cache:
                cache[text] = datetime.fromisoformat(text)
            out.append(cache[text])
        return out

    def to_matches(self) -> list[Match]:
        """The matches as :class:`~sedma_elo.core.model.Match` objects, in order."""
        ids = self.player_ids
        stats_cache: dict[tuple[int, ...], PlayerStats] = {}

        def stats(key: tuple[int, ...]) -> PlayerStats:
            found = stats_cache.get(key)
            if found is None:
                found = stats_cache[key] = PlayerStats(*key)
            return found

        when = self.played_at_datetimes()
        out = []
        counts = self.counts.tolist()
        for i, (a, b, w, c) in enumerate(
            zip(self.player_a.tolist(), self.player_b.tolist(), self.winner.tolist(), counts, strict=True)
        ):
            out.append(
                Match.single(
                    ids[a],
                    ids[b],
                    _WINNER_NAMES[w],  # type: ignore[arg-type]
                    stats((c[0], c[2], c[4], c[6])),
                    stats((c[1], c[3], c[5], c[7])),
                    match_id=self.match_ids[i] or None,
                    played_at=when[i],
                )
            )
        return out

    @classmethod
    def from_matches(cls, matches: Iterable[Match]) -> HistoryArrays:
        """Columns of one-against-one matches (``match_id``/``played_at`` may be missing: empty text).

        Raises:
            ValidationError: a team match (field ``team_a``); arrays hold one player a side.
        """
        index: dict[str, int] = {}
        pa: list[int] = []
        pb: list[int] = []
        winners: list[int] = []
        counts: list[tuple[int, ...]] = []
        match_ids: list[str] = []
        played_at: list[str] = []
        for n, m in enumerate(matches):
            if len(m.team_a) != 1:
                raise ValidationError("team_a", f"match {n}: team matches cannot be held as arrays")
            a, b = m.team_a[0], m.team_b[0]
            pa.append(index.setdefault(a, len(index)))
            pb.append(index.setdefault(b, len(index)))
            winners.append(_WINNER_CODES[m.winner])
            counts.append(_count_row(m))
            match_ids.append(m.match_id or "")
            played_at.append(m.played_at.isoformat() if m.played_at is not None else "")
        n_matches = len(pa)
        return cls(
            player_ids=list(index),
            player_a=np.array(pa, dtype=np.int32),
            player_b=np.array(pb, dtype=np.int32),
            winner=np.array(winners, dtype=np.int8),
            counts=np.array(counts, dtype=np.int32).reshape(n_matches, 8),
            match_ids=match_ids,
            played_at=played_at,
            lines=np.zeros(n_matches, dtype=np.int64),
        )


# ---------------------------------------------------------------------------- public readers


def _count_row(m: Match) -> tuple[int, ...]:
    """A one-against-one match's counts in the order of :data:`COUNT_COLUMNS`."""
    sa, sb = m.stats_of(m.team_a[0]), m.stats_of(m.team_b[0])
    return tuple(value for pair in zip(sa.key(), sb.key(), strict=True) for value in pair)
