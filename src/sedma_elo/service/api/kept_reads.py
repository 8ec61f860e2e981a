"""The read cache's kept answers, indexed by what a change of the ledger can make stale.

A ``match`` event of the change feed names every player it rated, with the rating before and
after. Such a change can make stale only

* the answers of ``/v1/players/{id}`` for those players (any query string: dropped by id);
* the leaderboard pages whose window holds the player's old or new place. A page is the run of
  players by (rating high to low, id) strictly after its cursor's key (or from the top) through
  its last item (or to the bottom when it has no ``next_cursor``): its items, ranks (counted from
  the cursor's rank) and next cursor depend on nothing else. A player whose old and new places
  both lie outside that window leaves the page as it was (above it, the ranks it shows come from
  its cursor), unless it leaves the run below a page that has a next cursor: that row may have
  been the last one after the page, whose ``next_cursor`` then becomes ``null``.

Anything else (a void, a re-rate, a switch of the active version, an event this module does not
know) may move any answer: :func:`moves` answers ``None`` and the cache drops everything.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar
from urllib.parse import parse_qs

from ...errors import ValidationError
from ..ledger.cursors import leaderboard_key
from ..ledger.feed_events import match_ratings

__all__ = ["KeptReads", "Moved", "moves"]

T = TypeVar("T")

#: A leaderboard place as a sort key: (-rating, player id) ascending is the board's order.
_Place = tuple[int, str]

LEADERBOARD = "/v1/leaderboard"
PLAYER = "/v1/players/"


@dataclass(frozen=True, slots=True)
class Moved:
    """One player rated by a change: the version, the id, the rating before and after (None: gone)."""

    version_id: int
    player_id: str
    before: int
    after: int | None


def moves(events: Iterable[tuple[str, str]]) -> list[Moved] | None:
    """The players the feed events ``(kind, data text)`` rated, or ``None`` if any may move anything."""
    out: list[Moved] = []
    for kind, data in events:
        if kind != "match":
            return None
        vid, players = match_ratings(data)
        out.extend(
            Moved(vid, pid, before, None if after is None else int(after)) for pid, before, after in players
        )
    return out


@dataclass(frozen=True, slots=True)
class _Window:
    """The places a kept leaderboard page depends on: strictly after ``after``, through ``through``."""

    version_id: int | None  # None: unknown, any move drops the page
    after: _Place | None  # None: from the top
    through: _Place | None  # None: to the bottom

    def holds(self, place: _Place) -> bool:
        return (self.after is None or place > self.after) and (self.through is None or place <= self.through)

    def moved_by(self, old: _Place, new: _Place | None) -> bool:
        """Whether a player moving from ``old`` to ``new`` (``None``: gone) can change this page."""
        if self.holds(old) or (new is not None and self.holds(new)):
            return True
        # Leaving the rows below the last item: it may have been the only one, the next cursor's basis.
        return self.through is not None and old > self.through and (new is None or new <= self.through)


_ANYTHING = _Window(None, None, None)


def _window(query: bytes, body: bytes) -> _Window:
    """The window of a leaderboard answer (``_ANYTHING`` when its query or body is not understood)."""
    try:
        cursors = parse_qs(query.decode("latin-1")).get("cursor")
        after = None
        if cursors:
            rating, pid, _ = leaderboard_key(cursors[-1])
            after = (-rating, pid)
        page = json.loads(body)
        items = page["items"]
        through = None
        if page["next_cursor"] is not None:
            through = (-int(items[-1]["rating"]), str(items[-1]["player_id"]))
        return _Window(int(page["ratings_version"]), after, through)
    except (ValueError, KeyError, IndexError, TypeError, ValidationError):
        return _ANYTHING


class KeptReads(Generic[T]):
    """At most ``size`` kept answers by (path, query string), the oldest dropped first.

    :meth:`drop` removes exactly those a set of :class:`Moved` players can make stale (see the
    module docstring); :meth:`clear` removes all.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: dict[tuple[str, bytes], T] = {}
        self._players: dict[str, set[tuple[str, bytes]]] = {}
        self._boards: dict[tuple[str, bytes], _Window] = {}

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key: tuple[str, bytes]) -> T | None:
        """The answer kept for ``key``, if any."""
        return self._answers.get(key)

    def keep(self, key: tuple[str, bytes], answer: T, body: bytes) -> None:
        """Keep ``answer`` (whose body is ``body``) for ``key``, a leaderboard or player read."""
        if key not in self._answers and len(self._answers) >= self.size:
            self._forget(next(iter(self._answers)))
        self._answers[key] = answer
        path, query = key
        if path == LEADERBOARD:
            self._boards[key] = _window(query, body)
        else:
            self._players.setdefault(path[len(PLAYER) :], set()).add(key)

    def clear(self) -> None:
        """Drop every kept answer."""
        self._answers.clear()
        self._players.clear()
        self._boards.clear()

    def drop(self, moved: Sequence[Moved]) -> None:
        """Drop the answers that ``moved`` can make stale."""
        places: dict[int, list[tuple[_Place, _Place | None]]] = {}
        for m in moved:
            for key in self._players.pop(m.player_id, ()):
                self._answers.pop(key, None)
            new = None if m.after is None else (-m.after, m.player_id)
            places.setdefault(m.version_id, []).append(((-m.before, m.player_id), new))
        if not places:
            return
        stale = [
            key
            for key, w in self._boards.items()
            if w.version_id is None or any(w.moved_by(old, new) for old, new in places.get(w.version_id, ()))
        ]
        for key in stale:
            self._forget(key)

    def _forget(self, key: tuple[str, bytes]) -> None:
        self._answers.pop(key, None)
        if self._boards.pop(key, None) is None:
            keys = self._players.get(key[0][len(PLAYER) :])
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._players[key[0][len(PLAYER) :]]
