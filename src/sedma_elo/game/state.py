"""The rules engine: one round (deal) as a mutable state machine, and how rounds make a match.

The trick, exactly as implemented (``docs/game.md`` says the same in words):

1. The leader plays any card; its rank is the *led rank* (a led seven leads rank seven).
2. The others play in seat order, any card (no duty to follow). After each card the *current
   winner* is the last player whose card matched the led rank or was a seven (the leader's own card
   counts as matching).
3. When everybody has played once (a *pass*): if the current winner is on the leader's side, the
   trick ends. Otherwise, if the leader holds a card of the led rank or a seven, the leader decides:
   *continue* by playing such a card (the leader is then the current winner, and everybody plays
   once more), or *stop* (``STOP``), giving the trick to the current winner. A leader without such a
   card cannot continue and the trick ends.
4. The trick's winner takes its cards, then everybody refills to four cards from the stock, one card
   at a time in seat order starting with the winner, until the hands are full or the stock is empty.
   The winner leads the next trick. When the hands are empty the round is over; the last trick's
   winner breaks a 4:4 tie.

Everybody plays the same number of cards in a trick and the stock always holds a multiple of the
number of players, so all hands have the same size at every moment a pass starts: nobody runs out in
the middle of a pass, and a leader with an empty hand simply cannot continue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .cards import N_CARDS, POINT_CARDS, RANKS, SEVENS, format_card, rank_mask
from .config import GameRules

__all__ = [
    "HAND_SIZE",
    "STOP",
    "RoundKind",
    "RoundResult",
    "RoundState",
    "format_move",
    "next_first_leader",
    "round_stake",
]

#: The move that ends a trick the leader could continue (gives it to the current winner).
STOP = 32
HAND_SIZE = 4
RoundKind = Literal["24", "16", "4_and_last", "plain"]


def format_move(move: int) -> str:
    """Text form of a move: a card code or ``"stop"``."""
    return "stop" if move == STOP else format_card(move)


def _popcount(x: int) -> int:
    return x.bit_count()


@dataclass(frozen=True, slots=True)
class RoundResult:
    """The outcome of a finished round. Sides: 0 = seats 0 (and 2), 1 = seats 1 (and 3).

    Attributes:
        points: aces and tens taken by each side (they sum to 8).
        tricks: tricks taken by each side.
        last_trick_side: the side that took the last trick.
        winner: the side that won the round (more points; on 4:4 the last trick).
        kind: ``"24"`` (winner took every trick), ``"16"`` (winner took all 8 points but not every
            trick), ``"4_and_last"`` (4:4 decided by the last trick) or ``"plain"``.
    """

    points: tuple[int, int]
    tricks: tuple[int, int]
    last_trick_side: int
    winner: int
    kind: RoundKind

    def counts_as_16(self, rules: GameRules) -> bool:
        """Whether this round counts as a 16er for the winner under ``rules``."""
        return self.kind == "16" or (self.kind == "24" and rules.count_24_as_16)


def round_stake(rules: GameRules, result: RoundResult) -> int:
    """Match points the round's winner earns."""
    if result.kind == "24":
        return rules.stake_24
    if result.kind == "16":
        return rules.stake_16
    return rules.stake_win


def next_first_leader(rules: GameRules, round_index: int, prev_first: int, prev_winner: int) -> int:
    """The seat that leads the first trick of round ``round_index`` (0-based)."""
    if round_index == 0 or rules.first_leader == "alternate":
        return round_index % rules.players
    side = prev_winner if rules.first_leader == "winner" else 1 - prev_winner
    for step in range(1, rules.players + 1):
        seat = (prev_first + step) % rules.players
        if seat % 2 == side:
            return seat
    raise AssertionError("unreachable: every side has a seat")  # pragma: no cover


class RoundState:
    """One round in play. Seats are ``0..n-1``; the side of seat ``s`` is ``s % 2``.

    Fields are public for the solver, bots and analysis, which read them directly for speed; only
    :meth:`play` changes them. Moves are card ints ``0..31`` or :data:`STOP`.
    """

    __slots__ = (
        "deciding",
        "deck",
        "done",
        "hands",
        "last_winner",
        "leader",
        "led",
        "n",
        "pos",
        "to_move",
        "trick",
        "tricks",
        "winner",
        "won",
    )

    def __init__(self, deck: list[int], players: int, first_leader: int) -> None:
        """Deal ``deck`` (a permutation of ``0..31``): four cards each, one at a time from the front,
        starting with ``first_leader``; the rest is the stock, drawn from the front."""
        self.n = players
        self.deck = deck
        self.hands = [0] * players
        for i in range(HAND_SIZE * players):
            self.hands[(first_leader + i) % players] |= 1 << deck[i]
        self.pos = HAND_SIZE * players
        self.to_move = first_leader
        self.leader = first_leader
        self.led = -1
        self.winner = first_leader
        self.trick = 0
        self.deciding = False
        self.won = [0, 0]
        self.tricks = [0, 0]
        self.last_winner = -1
        self.done = False

    def copy(self) -> RoundState:
        """An independent copy (the deck list is shared: it is never mutated)."""
        new = RoundState.__new__(RoundState)
        new.n = self.n
        new.deck = self.deck
        new.hands = self.hands[:]
        new.pos = self.pos
        new.to_move = self.to_move
        new.leader = self.leader
        new.led = self.led
        new.winner = self.winner
        new.trick = self.trick
        new.deciding = self.deciding
        new.won = self.won[:]
        new.tricks = self.tricks[:]
        new.last_winner = self.last_winner
        new.done = self.done
        return new

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return N_CARDS - self.pos

    def stock_mask(self) -> int:
        """The cards still in the stock, as a bitmask."""
        m = 0
        for c in self.deck[self.pos :]:
            m |= 1 << c
        return m

    def played_mask(self) -> int:
        """Every card already played (taken tricks and the current trick): public knowledge."""
        return self.won[0] | self.won[1] | self.trick

    def legal_moves(self) -> list[int]:
        """The legal moves of the player to move, cards lowest first, ``STOP`` last."""
        if self.done:
            return []
        h = self.hands[self.to_move]
        if self.deciding:
            h &= rank_mask(self.led) | SEVENS
        out = []
        while h:
            low = h & -h
            out.append(low.bit_length() - 1)
            h ^= low
        if self.deciding:
            out.append(STOP)
        return out

    def check(self, move: int) -> str | None:
        """Why ``move`` is illegal for the player to move, or ``None`` when it is legal."""
        if self.done:
            return "the round is already over"
        if move == STOP:
            if not self.deciding:
                return "'stop' is only possible when the leader may continue a trick the other side is taking"
            return None
        if not 0 <= move < N_CARDS:
            return f"no such card index {move}"
        bit = 1 << move
        p = self.to_move
        if not self.hands[p] & bit:
            if self.played_mask() & bit:
                return f"card {format_card(move)} was already played"
            return f"player {p} does not hold {format_card(move)}"
        if self.deciding and not bit & (rank_mask(self.led) | SEVENS):
            return (
                f"a trick can only be continued with a {RANKS[self.led]} (the led rank) or a seven, "
                f"not {format_card(move)}"
            )
        return None

    def play(self, move: int) -> None:
        """Play a legal ``move`` for the player to move (legality is the caller's duty: see :meth:`check`)."""
        if move == STOP:
            self._end_trick()
            return
        p = self.to_move
        bit = 1 << move
        self.hands[p] ^= bit
        self.trick |= bit
        leader = self.leader
        if self.led < 0:
            self.led = move >> 2
            self.winner = p
        elif self.deciding:
            self.deciding = False
            self.winner = p
        elif (move >> 2) == self.led or move < 4:
            self.winner = p
        nxt = p + 1 if p + 1 < self.n else 0
        if p != leader and nxt == leader:
            self._end_pass()
        else:
            self.to_move = nxt

    def _end_pass(self) -> None:
        leader = self.leader
        if (self.winner ^ leader) & 1 == 0:
            self._end_trick()
        elif self.hands[leader] & ((0xF << (4 * self.led)) | SEVENS):
            self.deciding = True
            self.to_move = leader
        else:
            self._end_trick()

    def _end_trick(self) -> None:
        w = self.winner
        side = w & 1
        self.won[side] |= self.trick
        self.tricks[side] += 1
        self.trick = 0
        self.led = -1
        self.deciding = False
        hands = self.hands
        n = self.n
        if self.pos < N_CARDS:
            need = HAND_SIZE - _popcount(hands[w])
            deck = self.deck
            pos = self.pos
            for _ in range(need):
                for i in range(n):
                    if pos < N_CARDS:
                        hands[(w + i) % n] |= 1 << deck[pos]
                        pos += 1
            self.pos = pos
        self.leader = w
        self.to_move = w
        if not hands[w]:
            self.done = True
            self.last_winner = w

    def points(self, side: int) -> int:
        """Aces and tens taken so far by ``side``."""
        return _popcount(self.won[side] & POINT_CARDS)

    def result(self) -> RoundResult:
        """The outcome of the finished round. Raises ``ValueError`` while the round is in play."""
        if not self.done:
            raise ValueError("the round is not over")
        pa, pb = self.points(0), self.points(1)
        last = self.last_winner & 1
        winner = 0 if pa > pb or (pa == pb and last == 0) else 1
        kind: RoundKind
        if self.tricks[1 - winner] == 0:
            kind = "24"
        elif (pa, pb)[winner] == 8:
            kind = "16"
        elif pa == pb:
            kind = "4_and_last"
        else:
            kind = "plain"
        return RoundResult((pa, pb), (self.tricks[0], self.tricks[1]), last, winner, kind)
