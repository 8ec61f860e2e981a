"""The choices the game's own rules leave open, as one validated object (see ``docs/game.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal

from ..errors import GameRecordError

__all__ = ["DEFAULT_GAME_RULES", "FirstLeader", "GameRules"]

FirstLeader = Literal["alternate", "winner", "loser"]
_FIRST_LEADERS = ("alternate", "winner", "loser")


@dataclass(frozen=True, slots=True)
class GameRules:
    """How rounds make a match and how a round is classified.

    Attributes:
        players: 2 (one against one) or 4 (two teams of two: seats 0 and 2 against 1 and 3).
        target: match points a side needs to win the match (the match ends the moment a side has them).
        stake_win, stake_16, stake_24: match points for winning a round plainly, as a 16er, as a 24er.
        first_leader: who leads the first trick of a round after the first: ``alternate`` (seat
            ``round_index mod players``), or a seat of the previous round's ``winner`` / ``loser`` side
            (the first such seat after the previous round's first leader).
        count_24_as_16: whether a 24er (every trick) also counts as a 16er in the statistics.
    """

    players: int = 2
    target: int = 3
    stake_win: int = 1
    stake_16: int = 2
    stake_24: int = 3
    first_leader: FirstLeader = "alternate"
    count_24_as_16: bool = False

    def __post_init__(self) -> None:
        if self.players not in (2, 4):
            raise GameRecordError("rules.players", f"must be 2 or 4, got {self.players!r}")
        for name in ("target", "stake_win", "stake_16", "stake_24"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
                raise GameRecordError(f"rules.{name}", f"must be an integer in [1, 1000], got {value!r}")
        if self.first_leader not in _FIRST_LEADERS:
            raise GameRecordError("rules.first_leader", f"must be one of {', '.join(_FIRST_LEADERS)}")
        if not isinstance(self.count_24_as_16, bool):
            raise GameRecordError("rules.count_24_as_16", "must be true or false")

    @classmethod
    def from_mapping(cls, data: object) -> GameRules:
        """Build from a JSON object (missing keys take the defaults; unknown keys are refused)."""
        if not isinstance(data, Mapping):
            raise GameRecordError("rules", "must be an object")
        known = set(cls.__dataclass_fields__)
        for key in data:
            if key not in known:
                raise GameRecordError(f"rules.{key}", f"unknown rule (known: {', '.join(sorted(known))})")
        return cls(**dict(data))

    def to_dict(self) -> dict[str, object]:
        """The rules as a JSON-ready dict."""
        return asdict(self)


DEFAULT_GAME_RULES = GameRules()
