"""A valid record's rounds trick by trick: who played what, in order, and who took each trick.

For showing a game (the service's match page); the rules stay in :mod:`.state`, which this only
replays. Moves are numbered from 1 within their round, as in the record's error messages and in
:class:`~.analysis.BadMove`, so a trick's plays can be matched with the bad moves.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import card_points
from .record import GameRecord, replay
from .state import STOP, RoundState, format_move

__all__ = ["Play", "Trick", "round_tricks"]


@dataclass(frozen=True, slots=True)
class Play:
    """One move of a trick: its number in the round (from 1), the seat and the card (or ``stop``)."""

    move: int
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class Trick:
    """One trick: its plays in order, the seat that took it and the points (aces and tens) in it."""

    plays: tuple[Play, ...]
    taker: int
    points: int


def round_tricks(record: GameRecord) -> list[list[Trick]]:
    """Every round's tricks, in order.

    Raises:
        GameRecordError: the record is invalid (see :func:`~.record.replay`).
    """
    leaders = replay(record).first_leaders
    out: list[list[Trick]] = []
    for rnd, first in zip(record.rounds, leaders, strict=True):
        state = RoundState(list(rnd.deck), record.rules.players, first)
        tricks: list[Trick] = []
        plays: list[Play] = []
        for i, mv in enumerate(rnd.moves):
            plays.append(Play(i + 1, mv.player, format_move(mv.move)))
            state.play(mv.move)
            if state.led < 0:  # the trick is over; its taker leads the next one
                cards = [m.move for m in rnd.moves[i + 1 - len(plays) : i + 1] if m.move != STOP]
                points = sum(card_points(c) for c in cards)
                tricks.append(Trick(tuple(plays), state.leader, points))
                plays = []
        out.append(tricks)
    return out
