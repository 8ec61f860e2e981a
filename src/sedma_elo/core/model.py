"""The inputs of a rating update: a finished match and each player's statistics.

Every constructor validates and raises :class:`~sedma_elo.errors.ValidationError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ..errors import ValidationError
from .rules import MAX_RATING, MIN_RATING

__all__ = [
    "MAX_COUNT",
    "MAX_PLAYER_ID_LENGTH",
    "WINNERS",
    "Match",
    "PlayerStats",
    "Winner",
    "check_rating",
]

Winner = Literal["a", "b", "draw"]
WINNERS: tuple[Winner, ...] = ("a", "b", "draw")
#: Counts above this are refused: a match never has that many rounds, and it keeps every count
#: exactly representable in single precision as the C# method needs.
MAX_COUNT = 1_000_000
MAX_PLAYER_ID_LENGTH = 128
STAT_FIELDS = ("bad_moves", "won_by_16", "won_by_24", "won_by_4_and_last")


def check_count(field: str, value: object) -> int:
    """Return ``value`` if it is an int in ``[0, MAX_COUNT]`` (bool refused), else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be a non-negative integer, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValidationError(field, f"must be >= 0, got {value}")
    if value > MAX_COUNT:
        raise ValidationError(field, f"must be <= {MAX_COUNT}, got {value}")
    return value


def check_rating(field: str, value: object) -> int:
    """Return ``value`` if it is an int rating in ``[MIN_RATING, MAX_RATING]``, else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be an integer rating, got {type(value).__name__} {value!r}")
    if not MIN_RATING <= value <= MAX_RATING:
        raise ValidationError(field, f"must be within [{MIN_RATING}, {MAX_RATING}], got {value}")
    return value


def check_player_id(field: str, value: object) -> str:
    """Return ``value`` if it is a non-empty player id of at most 128 characters, else raise."""
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if not value or value.isspace():
        raise ValidationError(field, "must not be empty")
    if len(value) > MAX_PLAYER_ID_LENGTH:
        raise ValidationError(field, f"must be at most {MAX_PLAYER_ID_LENGTH} characters")
    return value


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """One player's statistics in one match; every count is an int in ``[0, MAX_COUNT]``.

    Attributes:
        bad_moves: moves judged bad (each costs the malus).
        won_by_16: rounds won with all 8 points (a "16er").
        won_by_24: rounds won with every trick (a "24er").
        won_by_4_and_last: rounds won 4:4 by taking the last trick.
    """

    bad_moves: int = 0
    won_by_16: int = 0
    won_by_24: int = 0
    won_by_4_and_last: int = 0

    def __post_init__(self) -> None:
        check_count("bad_moves", self.bad_moves)
        check_count("won_by_16", self.won_by_16)
        check_count("won_by_24", self.won_by_24)
        check_count("won_by_4_and_last", self.won_by_4_and_last)

    def key(self) -> tuple[int, int, int, int]:
        """The counts as a tuple (bad_moves, won_by_16, won_by_24, won_by_4_and_last)."""
        return (self.bad_moves, self.won_by_16, self.won_by_24, self.won_by_4_and_last)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], *, prefix: str = "") -> PlayerStats:
        """Build from a mapping with the four count fields (missing ones are 0; others refused)."""
        if not isinstance(data, Mapping):
            raise ValidationError(prefix.rstrip(".") or "stats", "must be an object")
        for key in data:
            if key not in STAT_FIELDS:
                raise ValidationError(f"{prefix}{key}", f"unknown field (allowed: {', '.join(STAT_FIELDS)})")
        values = {}
        for name in STAT_FIELDS:
            values[name] = check_count(f"{prefix}{name}", data.get(name, 0))
        return cls(**values)

    def to_dict(self) -> dict[str, int]:
        """The four counts by field name."""
        return {name: getattr(self, name) for name in STAT_FIELDS}


NO_STATS = PlayerStats()


@dataclass(frozen=True, slots=True)
class Match:
    """A finished match between side ``a`` and side ``b`` (one player each, or a team of two).

    Attributes:
        team_a, team_b: player ids of each side (1 or 2 each, equal sizes, all distinct).
        winner: ``"a"``, ``"b"`` or ``"draw"``.
        stats: statistics by player id; a player without an entry has all counts 0.
        match_id: optional identifier (used by histories and the service).
        played_at: optional time the match ended.
    """

    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    winner: Winner
    stats: Mapping[str, PlayerStats]
    match_id: str | None = None
    played_at: datetime | None = None

    def __post_init__(self) -> None:
        for side, team in (("team_a", self.team_a), ("team_b", self.team_b)):
            if not isinstance(team, tuple) or not 1 <= len(team) <= 2:
                raise ValidationError(side, "must be a tuple of one or two player ids")
            for i, pid in enumerate(team):
                check_player_id(f"{side}[{i}]" if len(team) > 1 else side.replace("team", "player"), pid)
        if len(self.team_a) != len(self.team_b):
            raise ValidationError("team_b", f"must have as many players as team_a ({len(self.team_a)})")
        everyone = self.team_a + self.team_b
        if len(set(everyone)) != len(everyone):
            if len(everyone) == 2:
                raise ValidationError("player_b", "a player cannot play against themself")
            raise ValidationError("team_b", "every player of a match must be distinct")
        if self.winner not in WINNERS:
            raise ValidationError("winner", f"must be one of 'a', 'b', 'draw', got {self.winner!r}")
        if not isinstance(self.stats, Mapping):
            raise ValidationError("stats", "must be a mapping of player id to PlayerStats")
        for pid, st in self.stats.items():
            if pid not in everyone:
                raise ValidationError(f"stats.{pid}", "is not a player of this match")
            if not isinstance(st, PlayerStats):
                raise ValidationError(f"stats.{pid}", "must be a PlayerStats")
        if self.match_id is not None:
            check_player_id("match_id", self.match_id)

    @classmethod
    def single(
        cls,
        player_a: str,
        player_b: str,
        winner: Winner,
        stats_a: PlayerStats = NO_STATS,
        stats_b: PlayerStats = NO_STATS,
        *,
        match_id: str | None = None,
        played_at: datetime | None = None,
    ) -> Match:
        """A one-against-one match (the game's usual form)."""
        return cls(
            (player_a,), (player_b,), winner, {player_a: stats_a, player_b: stats_b}, match_id, played_at
        )

    @property
    def players(self) -> tuple[str, ...]:
        """All player ids, side a first."""
        return self.team_a + self.team_b

    def stats_of(self, player_id: str) -> PlayerStats:
        """The statistics of ``player_id`` (all zero when none were given)."""
        return self.stats.get(player_id, NO_STATS)
