"""A career summary as a fold over the player's matches in sequence order, storable and extendable.

Everything on a player page's summary (record, streaks, peak, best win, first and last time,
meetings by opponent) is a left fold over the career: the state after the matches through
sequence ``S``, plus the player's matches after ``S``, gives the state after all of them. A read
stores the state (``career_states``, :data:`STORE_AFTER` new matches or more) and the next read
folds only the newer matches into it, instead of joining every match of a 10,000-match career to
its scattered ``matches`` row (322-480 ms warm on the 10 M ledger, docs/service.md).

A player's matches commit in sequence order (a writer takes the players' locks before its
sequences), so no match at or below a stored ``through`` can appear later. Only a void rewrites
history: it bumps the version's ``rewrites``, and a state stored under another count is not used
(and is replaced by the next store).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["STORE_AFTER", "STORE_SQL", "CareerFold", "Meetings"]

Int64Array = npt.NDArray[np.int64]

#: A read stores its state when it folded at least this many matches: a short career is cheap to
#: read whole, and a page view of a busy player does not write for every few new matches.
STORE_AFTER = 100

#: Store a state unless a newer one (a later ``through`` under the same rewrites) is there; one of
#: the same ``through`` is replaced (the same summary: a state in the form before migration 0014
#: is written again in the current one); parameters: version, player key, through, rewrites, state.
STORE_SQL = (
    "INSERT INTO career_states AS s (version_id, player_key, through, rewrites, state)"
    " VALUES ({ph}, {ph}, {ph}, {ph}, {ph}) ON CONFLICT (version_id, player_key) DO UPDATE SET"
    " through = excluded.through, rewrites = excluded.rewrites, state = excluded.state"
    " WHERE s.rewrites < excluded.rewrites"
    " OR (s.rewrites = excluded.rewrites AND s.through <= excluded.through)"
)

_WIN, _LOSS, _DRAW = 0, 1, 2  # the result codes of career.py's statements
# A stored table of meetings: rows of (opponent key, wins, draws, losses), little-endian int32.
_ROW = np.dtype("<i4")


class Meetings:
    """Games against each opponent: (wins, draws, losses) by the opponent's player key.

    A stored state's table is kept as two arrays (``keys`` ascending, ``counts`` one row of three
    each); the matches folded after it go to ``added``, a dict, and are merged in when the whole
    table is needed. A 10,000-match career meets about 7,000 opponents: building a dict of lists
    from the stored text was most of the summary's time (docs/web.md, "The summary's meetings as
    arrays").
    """

    __slots__ = ("added", "counts", "keys")

    def __init__(self, keys: Int64Array | None = None, counts: Int64Array | None = None) -> None:
        self.keys: Int64Array = np.empty(0, dtype=np.int64) if keys is None else keys
        self.counts: Int64Array = np.empty((0, 3), dtype=np.int64) if counts is None else counts
        self.added: dict[int, list[int]] = {}

    def merged(self) -> tuple[Int64Array, Int64Array]:
        """Every opponent's key (ascending) and counts (wins, draws, losses): ``added`` is merged
        into the arrays (and emptied) first."""
        if self.added:
            new_keys = np.fromiter(self.added, dtype=np.int64, count=len(self.added))
            new_counts = np.array(list(self.added.values()), dtype=np.int64).reshape(-1, 3)
            at = np.searchsorted(self.keys, new_keys)
            known = at < self.keys.size
            known[known] = self.keys[at[known]] == new_keys[known]
            counts = self.counts.copy()
            counts[at[known]] += new_counts[known]  # each key once in ``added``: no repeated index
            keys = np.concatenate([self.keys, new_keys[~known]])
            counts = np.concatenate([counts, new_counts[~known]])
            order = np.argsort(keys, kind="stable")
            self.keys, self.counts, self.added = keys[order], counts[order], {}
        return self.keys, self.counts

    def most_played(self, top: int) -> tuple[Int64Array, Int64Array]:
        """Keys and counts of the opponents met at least as often as the ``top``-th most met one
        (ties with it included, so more than ``top`` may come back); none for ``top <= 0``."""
        keys, counts = self.merged()
        if top <= 0 or keys.size == 0:
            return keys[:0], counts[:0]
        totals = counts.sum(axis=1)
        k = min(top, totals.size)
        cut = np.partition(totals, totals.size - k)[totals.size - k]
        kept = totals >= cut
        return keys[kept], counts[kept]

    def to_text(self) -> str:
        """The table as base64 text of its rows (see :data:`_ROW`)."""
        keys, counts = self.merged()
        rows = np.column_stack([keys, counts]).astype(_ROW)
        return base64.b64encode(rows.tobytes()).decode("ascii")

    @classmethod
    def from_stored(cls, stored: str | list[int]) -> Meetings:
        """The table :meth:`to_text` wrote, or the flat JSON list (key, wins, draws, losses, key...)
        that states stored before it hold."""
        if isinstance(stored, str):
            rows = np.frombuffer(base64.b64decode(stored), dtype=_ROW).reshape(-1, 4).astype(np.int64)
        else:
            rows = np.array(stored, dtype=np.int64).reshape(-1, 4)
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
        return cls(np.ascontiguousarray(rows[:, 0]), np.ascontiguousarray(rows[:, 1:]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Meetings):
            return NotImplemented
        keys, counts = self.merged()
        other_keys, other_counts = other.merged()
        return bool(np.array_equal(keys, other_keys) and np.array_equal(counts, other_counts))

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        keys, counts = self.merged()
        return f"Meetings({dict(zip(keys.tolist(), counts.tolist(), strict=True))})"


@dataclass(slots=True)
class CareerFold:
    """The summary of a career's matches through sequence ``through`` (0: none yet).

    ``counts`` are (wins, losses, draws); ``last`` the last result code (-1: none) and ``streak``
    the length of its run; ``peak`` and ``best`` are (sequence, value) of the first highest rating
    after a match and of the first win against the highest mean rating of the other side
    (``best``'s value is twice the mean: an integer); times are microseconds since 1970 or None;
    ``meetings`` holds (wins, draws, losses) against each opponent (:class:`Meetings`).
    """

    through: int = 0
    played: int = 0
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])
    run_win: int = 0
    best_win_streak: int = 0
    last: int = -1
    streak: int = 0
    peak: tuple[int, int] | None = None
    best: tuple[int, int] | None = None
    first_at: int | None = None
    last_at: int | None = None
    meetings: Meetings = field(default_factory=Meetings)
    #: Read from a state stored before migration 0014 (meetings as a JSON list, slower to read):
    #: :meth:`~.career_bulk.CareerBulkMixin.store_careers` stores it again in the current form.
    #: Not stored itself.
    legacy: bool = field(default=False, compare=False)

    def add(self, rows: Iterable[tuple[Any, ...]]) -> int:
        """Fold in the player's matches after ``through`` as ``(sequence, rating after, result code,
        opponent key, opponent key or None, time)``, oldest first; return how many."""
        slot = (0, 2, 1)  # result code (win, loss, draw) -> index in (wins, draws, losses)
        added = self.meetings.added
        n = 0
        for seq, after, res, o1, o2, at in rows:
            if self.played + n == 0:
                self.first_at = at
            n += 1
            if self.peak is None or after > self.peak[1]:
                self.peak = (seq, after)
            self.counts[res] += 1
            if res == _WIN:
                self.run_win += 1
                self.best_win_streak = max(self.best_win_streak, self.run_win)
            else:
                self.run_win = 0
            self.streak = self.streak + 1 if res == self.last else 1
            self.last = res
            for key in (o1, o2):
                if key is not None:
                    added.setdefault(key, [0, 0, 0])[slot[res]] += 1
            self.through, self.last_at = seq, at
        self.played += n
        return n

    def offer_best(self, sequence: int, twice_mean: int) -> None:
        """A win after the folded ones against ``twice_mean``: the best if strictly higher (the
        first one keeps a tie)."""
        if self.best is None or twice_mean > self.best[1]:
            self.best = (sequence, twice_mean)

    def to_text(self) -> str:
        """The state as JSON text (meetings as one base64 string: :meth:`Meetings.to_text`)."""
        return json.dumps(
            [self.through, self.played, self.counts, self.run_win, self.best_win_streak, self.last,
             self.streak, self.peak, self.best, self.first_at, self.last_at, self.meetings.to_text()],
            separators=(",", ":"),
        )  # fmt: skip

    @classmethod
    def from_text(cls, text: str) -> CareerFold:
        """The state :meth:`to_text` wrote (or, with meetings as a flat JSON list, an earlier version)."""
        through, played, counts, run, best_run, last, streak, peak, best, first, last_at, stored = json.loads(
            text
        )
        meetings = Meetings.from_stored(stored)
        return cls(
            through, played, counts, run, best_run, last, streak,
            None if peak is None else (peak[0], peak[1]),
            None if best is None else (best[0], best[1]),
            first, last_at, meetings, not isinstance(stored, str),
        )  # fmt: skip
