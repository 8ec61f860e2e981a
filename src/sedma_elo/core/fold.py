"""The one fold over matches: apply a sequence of matches to a ratings state under a rule set.

Every path that rates more than one match (the Python replay, the ledger's write batches, its void
and re-rate rebuilds, ``verify``, the CLI demo, the backtests) goes through :class:`RatingState`,
so what a rule needs to know about a player (today: the rating and the games played before the
match) is tracked in one place. The numba kernel (:mod:`sedma_elo.batch.kernel`) is the fast path
with the same contract and is tested against this fold.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from .engine import RatingResult, rate
from .model import Match
from .rules import REFERENCE_RULES, Rules

__all__ = ["RatingState", "fold"]


@dataclass(slots=True)
class RatingState:
    """What the rules know about every player between matches; mutated by :meth:`apply`.

    Attributes:
        ratings: current integer rating by player id; a player missing here starts at the
            rules' ``initial_rating``.
        games: games played before the next match, by player id (missing: 0). Rules whose K
            depends on games played (``Rules.uses_games_played``) read it.
    """

    ratings: dict[str, int] = field(default_factory=dict)
    games: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls, ratings: Mapping[str, int] | None = None, games: Mapping[str, int] | None = None
    ) -> RatingState:
        """A state holding copies of ``ratings`` and ``games`` (neither argument is changed later)."""
        return cls(dict(ratings or {}), dict(games or {}))

    def rate(self, match: Match, rules: Rules = REFERENCE_RULES) -> RatingResult:
        """Rate ``match`` against this state without changing it.

        Raises:
            ValidationError: as :func:`~sedma_elo.core.engine.rate` (a rating out of range...).
        """
        return rate(match, self.ratings, rules, games_played=self.games)

    def commit(self, result: RatingResult) -> None:
        """Record a result of :meth:`rate`: new ratings, and one more game for each player."""
        ratings = self.ratings
        games = self.games
        for change in result.changes:
            pid = change.player_id
            ratings[pid] = change.rating_after
            games[pid] = games.get(pid, 0) + 1

    def apply(self, match: Match, rules: Rules = REFERENCE_RULES) -> RatingResult:
        """Rate ``match`` and record the result; on an error the state is unchanged.

        Raises:
            ValidationError: as :func:`~sedma_elo.core.engine.rate`.
        """
        result = self.rate(match, rules)
        self.commit(result)
        return result


def fold(
    matches: Iterable[Match], rules: Rules = REFERENCE_RULES, state: RatingState | None = None
) -> Iterator[RatingResult]:
    """Apply ``matches`` in order to ``state`` (a new, empty state by default), yielding each result.

    The state is updated as the iterator advances; stop early and it holds the ratings so far.

    Raises:
        ValidationError: as :func:`~sedma_elo.core.engine.rate`; the state then holds the ratings
            before the refused match.
    """
    current = RatingState() if state is None else state
    for match in matches:
        yield current.apply(match, rules)
