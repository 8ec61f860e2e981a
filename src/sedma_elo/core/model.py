"""The inputs of a rating update: a finished match and each player's statistics.

The one check of match inputs: ids (the rule of :mod:`sedma_elo.core.ids`), counts, teams and
times. The history reader, the service's payloads, the CLI and game records call these checks;
every constructor validates and raises :class:`~sedma_elo.errors.ValidationError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from ..errors import ValidationError
from .ids import MAX_ID_LENGTH, check_id, normalize_id
from .rules import MAX_RATING, MIN_RATING

__all__ = [
    "MAX_COUNT",
    "MAX_PLAYER_ID_LENGTH",
    "WINNERS",
    "Match",
    "PlayerStats",
    "Winner",
    "check_count",
    "check_played_at",
    "check_player_id",
    "check_rating",
    "played_at_problem",
]

Winner = Literal["a", "b", "draw"]
WINNERS: tuple[Winner, ...] = ("a", "b", "draw")
#: Counts above this are refused: a match never has that many rounds, and it keeps every count
#: exactly representable in single precision as the C# method needs.
MAX_COUNT = 1_000_000
MAX_PLAYER_ID_LENGTH = MAX_ID_LENGTH
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


#: Player ids and match ids follow one rule (:mod:`sedma_elo.core.ids`): NFC, 1 to 128
#: characters, no ``/``, control or format character, no surrounding whitespace.
check_player_id = check_id


def played_at_problem(value: datetime) -> str | None:
    """Why ``value`` cannot be a match time, or None: an aware time must have a UTC equivalent.

    ``0001-01-01T00:00:00+00:01`` is a valid ISO 8601 text whose UTC time is before year 1; the
    ledger stores times in UTC, so such a time is refused where it enters.
    """
    if value.tzinfo is not None:
        try:
            value.astimezone(UTC)
        except (OverflowError, ValueError):
            return f"{value.isoformat()} is outside the years 1 to 9999 in UTC"
    return None


def check_played_at(field: str, value: object) -> datetime:
    """Return ``value`` as a datetime if it is one, or ISO 8601 text of a date or a date and time.

    A date alone is midnight; a time without an offset is kept naive (the ledger reads it as UTC).

    Raises:
        ValidationError: not ISO 8601 text or a datetime, or an aware time without a UTC equivalent.
    """
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            message = f"must be an ISO 8601 date or date and time, got {value!r}"
            raise ValidationError(field, message) from None
    if not isinstance(value, datetime):
        raise ValidationError(field, f"must be a datetime, got {type(value).__name__}")
    problem = played_at_problem(value)
    if problem is not None:
        raise ValidationError(field, problem)
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
#: The field an id error names, by side and team size.
_ID_FIELDS = {
    ("team_a", 1): ("player_a",),
    ("team_b", 1): ("player_b",),
    ("team_a", 2): ("team_a[0]", "team_a[1]"),
    ("team_b", 2): ("team_b[0]", "team_b[1]"),
}


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
        # Ids are normalised to NFC first (the stored tuples and stats keys become NFC too), so
        # two spellings of one name are one player everywhere after this point.
        for side, team in (("team_a", self.team_a), ("team_b", self.team_b)):
            if not isinstance(team, tuple) or not 1 <= len(team) <= 2:
                raise ValidationError(side, "must be a tuple of one or two player ids")
            fields = _ID_FIELDS[side, len(team)]
            for i, pid in enumerate(team):
                if check_id(fields[i], pid) is not pid:  # not NFC (rare): store the NFC tuple
                    object.__setattr__(self, side, tuple(map(check_id, fields, team)))
                    break
        if len(self.team_a) != len(self.team_b):
            raise ValidationError("team_b", f"must have as many players as team_a ({len(self.team_a)})")
        everyone = self.team_a + self.team_b
        distinct = set(everyone)
        if len(distinct) != len(everyone):
            if len(everyone) == 2:
                raise ValidationError("player_b", "a player cannot play against themself")
            raise ValidationError("team_b", "every player of a match must be distinct")
        if self.winner not in WINNERS:
            raise ValidationError("winner", f"must be one of 'a', 'b', 'draw', got {self.winner!r}")
        if not isinstance(self.stats, Mapping):
            raise ValidationError("stats", "must be a mapping of player id to PlayerStats")
        if not distinct.issuperset(self.stats):
            self._normalize_stats_keys(everyone)
        for pid, st in self.stats.items():
            if not isinstance(st, PlayerStats):
                raise ValidationError(f"stats.{pid}", "must be a PlayerStats")
        if self.match_id is not None:
            match_id = check_id("match_id", self.match_id)
            if match_id != self.match_id:
                object.__setattr__(self, "match_id", match_id)
        if isinstance(self.played_at, datetime) and self.played_at.tzinfo is not None:
            check_played_at("played_at", self.played_at)  # an aware time needs a UTC equivalent

    def _normalize_stats_keys(self, everyone: tuple[str, ...]) -> None:
        stats: dict[str, PlayerStats] = {}
        for pid, st in self.stats.items():
            key = normalize_id(pid) if isinstance(pid, str) else pid
            if key not in everyone:
                raise ValidationError(f"stats.{pid}", "is not a player of this match")
            if key in stats:
                raise ValidationError(f"stats.{pid}", "is given twice (ids are compared in Unicode NFC)")
            stats[key] = st
        object.__setattr__(self, "stats", stats)

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
