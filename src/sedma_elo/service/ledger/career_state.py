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

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STORE_AFTER", "STORE_SQL", "CareerFold"]

#: A read stores its state when it folded at least this many matches: a short career is cheap to
#: read whole, and a page view of a busy player does not write for every few new matches.
STORE_AFTER = 100

#: Store a state unless a newer one (a later ``through`` under the same rewrites) is there;
#: parameters: version, player key, through, rewrites, state.
STORE_SQL = (
    "INSERT INTO career_states AS s (version_id, player_key, through, rewrites, state)"
    " VALUES ({ph}, {ph}, {ph}, {ph}, {ph}) ON CONFLICT (version_id, player_key) DO UPDATE SET"
    " through = excluded.through, rewrites = excluded.rewrites, state = excluded.state"
    " WHERE s.rewrites < excluded.rewrites"
    " OR (s.rewrites = excluded.rewrites AND s.through < excluded.through)"
)

_WIN, _LOSS, _DRAW = 0, 1, 2  # the result codes of career.py's statements


@dataclass(slots=True)
class CareerFold:
    """The summary of a career's matches through sequence ``through`` (0: none yet).

    ``counts`` are (wins, losses, draws); ``last`` the last result code (-1: none) and ``streak``
    the length of its run; ``peak`` and ``best`` are (sequence, value) of the first highest rating
    after a match and of the first win against the highest mean rating of the other side
    (``best``'s value is twice the mean: an integer); times are microseconds since 1970 or None;
    ``meetings`` maps an opponent's key to (wins, draws, losses) against them.
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
    meetings: dict[int, list[int]] = field(default_factory=dict)

    def add(self, rows: Iterable[tuple[Any, ...]]) -> int:
        """Fold in the player's matches after ``through`` as ``(sequence, rating after, result code,
        opponent key, opponent key or None, time)``, oldest first; return how many."""
        slot = (0, 2, 1)  # result code (win, loss, draw) -> index in (wins, draws, losses)
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
                    self.meetings.setdefault(key, [0, 0, 0])[slot[res]] += 1
            self.through, self.last_at = seq, at
        self.played += n
        return n

    def offer_best(self, sequence: int, twice_mean: int) -> None:
        """A win after the folded ones against ``twice_mean``: the best if strictly higher (the
        first one keeps a tie)."""
        if self.best is None or twice_mean > self.best[1]:
            self.best = (sequence, twice_mean)

    def to_text(self) -> str:
        """The state as JSON text (meetings as one flat list of key, wins, draws, losses)."""
        flat = [v for k, c in self.meetings.items() for v in (k, *c)]
        return json.dumps(
            [self.through, self.played, self.counts, self.run_win, self.best_win_streak, self.last,
             self.streak, self.peak, self.best, self.first_at, self.last_at, flat],
            separators=(",", ":"),
        )  # fmt: skip

    @classmethod
    def from_text(cls, text: str) -> CareerFold:
        """The state :meth:`to_text` wrote."""
        through, played, counts, run, best_run, last, streak, peak, best, first, last_at, flat = json.loads(
            text
        )
        meetings = {flat[i]: flat[i + 1 : i + 4] for i in range(0, len(flat), 4)}
        return cls(
            through, played, counts, run, best_run, last, streak,
            None if peak is None else (peak[0], peak[1]),
            None if best is None else (best[0], best[1]),
            first, last_at, meetings,
        )  # fmt: skip
