"""Exact solver for a two-player round once the stock is empty (a perfect-information game).

Only ranks matter in play (no suit to follow; the sevens are the trumps), so a hand is kept as eight
card counts packed 3 bits per rank, and two cards of one rank are one move. The search is alpha-beta
over the value *half-points seat 0 takes from here on* (each ace or ten 2, the last trick 1: the
last trick only breaks a 4:4 tie, exactly like half a point), with a transposition table of
``(lower, upper)`` bounds keyed by the whole state, and a cheap move ordering (taking cards and
low cards first). The table is valid for any position, so one :class:`Solver` can be reused across
positions, rounds and matches; it is cleared when it grows past ``max_entries`` (default 500,000
entries, roughly 75 MB).
"""

from __future__ import annotations

from .cards import POINT_CARDS
from .state import STOP, RoundState

__all__ = ["HALF_POINTS_TOTAL", "Solver", "final_value", "pack_hand"]

#: 8 points at 2 half-points each, plus the last trick's 1.
HALF_POINTS_TOTAL = 17
_LEAD, _FOLLOW, _DECIDE = 0, 1, 2
#: Half-points of a card of each rank (ten and ace).
_RANK_PTS = (0, 0, 0, 2, 0, 0, 0, 2)
#: Rank visiting order when leading or throwing: plain low cards first, then points, sevens last.
_ORDER = (1, 2, 4, 5, 6, 3, 7, 0)


def _pack_slow(mask: int, ranks: int) -> int:
    packed = 0
    for rank in range(ranks):
        packed |= ((mask >> (4 * rank)) & 0xF).bit_count() << (3 * rank)
    return packed


#: Packed counts of every 16-bit half hand (four ranks), so a hand packs with two look-ups.
_HALF = tuple(_pack_slow(m, 4) for m in range(1 << 16))


def pack_hand(mask: int) -> int:
    """Pack a card bitmask into eight 3-bit rank counts (rank 0 = sevens in the lowest bits)."""
    return _HALF[mask & 0xFFFF] | (_HALF[mask >> 16] << 12)


_Child = tuple[int, int, int, int, int, int, int]


def _children(h0: int, h1: int, leader: int, phase: int, led: int, pts: int, mover: int) -> list[_Child]:
    """The moves of a packed state, best-first guess, each as
    ``(rank or -1 for stop, h0, h1, next phase or -1 when the trick ends, led rank, trick half-points,
    the trick's taker when it ends)``."""
    hand = h0 if mover == 0 else h1
    out: list[_Child] = []
    if phase == _LEAD:
        for r in _ORDER:
            if (hand >> (3 * r)) & 7:
                nh = hand - (1 << (3 * r))
                n0, n1 = (nh, h1) if mover == 0 else (h0, nh)
                out.append((r, n0, n1, _FOLLOW, r, _RANK_PTS[r], -1))
    elif phase == _FOLLOW:
        lhand = h0 if leader == 0 else h1
        can_continue = (lhand >> (3 * led)) & 7 or lhand & 7
        # Taking cards first (led rank, then a seven), then the rest low to high.
        order = (led, 0, *(r for r in _ORDER if r != led and r != 0)) if led != 0 else _ORDER[::-1]
        for r in order:
            if (hand >> (3 * r)) & 7:
                nh = hand - (1 << (3 * r))
                n0, n1 = (nh, h1) if mover == 0 else (h0, nh)
                p2 = pts + _RANK_PTS[r]
                if r != led and r != 0:
                    out.append((r, n0, n1, -1, led, p2, leader))
                elif can_continue:
                    out.append((r, n0, n1, _DECIDE, led, p2, -1))
                else:
                    out.append((r, n0, n1, -1, led, p2, mover))
    else:
        for r in (led, 0) if led != 0 else (0,):
            if (hand >> (3 * r)) & 7:
                nh = hand - (1 << (3 * r))
                n0, n1 = (nh, h1) if mover == 0 else (h0, nh)
                out.append((r, n0, n1, _FOLLOW, led, pts + _RANK_PTS[r], -1))
        out.append((-1, h0, h1, -1, led, pts, 1 - leader))
    return out


class Solver:
    """Alpha-beta with a transposition table; see the module docstring."""

    __slots__ = ("max_entries", "nodes", "tt")

    def __init__(self, max_entries: int = 500_000) -> None:
        self.tt: dict[int, tuple[int, int]] = {}
        self.max_entries = max_entries
        self.nodes = 0

    def solve(self, state: RoundState) -> int:
        """Half-points seat 0's side takes from the cards not yet won, under perfect play by both.

        ``state`` must be a two-player round with an empty stock (raises ``ValueError`` otherwise).
        """
        if state.n != 2 or state.pos < 32:
            raise ValueError("the exact solver needs a two-player round with an empty stock")
        if state.done:
            return 0
        return self._search(*self._root(state), 0, HALF_POINTS_TOTAL)

    def _root(self, state: RoundState) -> tuple[int, int, int, int, int, int]:
        """The packed search state of ``state``: (h0, h1, leader, phase, led, trick half-points)."""
        if state.n != 2 or state.pos < 32 or state.done:
            raise ValueError("the exact solver needs an unfinished two-player round with an empty stock")
        if len(self.tt) > self.max_entries:
            self.tt.clear()
        h0, h1 = pack_hand(state.hands[0]), pack_hand(state.hands[1])
        pts = 2 * (state.trick & POINT_CARDS).bit_count()
        phase = _LEAD if state.led < 0 else _DECIDE if state.deciding else _FOLLOW
        return h0, h1, state.leader, phase, state.led, pts

    def _trick_end(self, h0: int, h1: int, w: int, pts: int, alpha: int, beta: int) -> int:
        if not h0 and not h1:
            return pts + 1 if w == 0 else 0
        gain = pts if w == 0 else 0
        return gain + self._search(h0, h1, w, _LEAD, -1, 0, alpha - gain, beta - gain)

    def _search(
        self,
        h0: int,
        h1: int,
        leader: int,
        phase: int,
        led: int,
        pts: int,
        alpha: int,
        beta: int,
        out: dict[int, int] | None = None,
    ) -> int:
        """Fail-soft alpha-beta. With ``out`` (root only) every child is searched with the full window
        and its exact value stored under its rank (``-1`` for stop)."""
        key = h0 | (h1 << 24) | (leader << 48) | (phase << 49) | ((led + 1) << 51) | (pts << 55)
        tt = self.tt
        lo, hi = tt.get(key, (0, HALF_POINTS_TOTAL))
        if out is None:
            if lo >= beta:
                return lo
            if hi <= alpha:
                return hi
            if lo == hi:
                return lo
        else:
            lo, hi = 0, HALF_POINTS_TOTAL
        a0, b0 = max(alpha, lo), min(beta, hi)
        a, b = a0, b0
        self.nodes += 1
        mover = leader if phase != _FOLLOW else 1 - leader
        maximize = mover == 0
        best = -1 if maximize else HALF_POINTS_TOTAL + 1
        for r, n0, n1, nphase, nled, p2, taker in _children(h0, h1, leader, phase, led, pts, mover):
            if nphase < 0:
                v = self._trick_end(n0, n1, taker, p2, a, b)
            else:
                v = self._search(n0, n1, leader, nphase, nled, p2, a, b)
            if out is not None:
                out[r] = v
                best = max(best, v) if maximize else min(best, v)
                continue
            if maximize:
                if v > best:
                    best = v
                    if v > a:
                        a = v
            elif v < best:
                best = v
                if v < b:
                    b = v
            if a >= b:
                break
        if best <= a0:
            tt[key] = (lo, best)
        elif best >= b0:
            tt[key] = (best, hi)
        else:
            tt[key] = (best, best)
        return best

    def move_values(self, state: RoundState) -> dict[int, int]:
        """For each legal move, the mover side's final half-points (``0..17``) under perfect play.

        Final means the whole round: the half-points already won are included. Two cards of the same
        rank always get the same value. ``state`` as for :meth:`solve` and not finished.
        """
        args = self._root(state)
        by_rank: dict[int, int] = {}
        self._search(*args, 0, HALF_POINTS_TOTAL, by_rank)
        won0 = 2 * state.points(0)
        flip = state.to_move & 1
        out: dict[int, int] = {}
        for move in state.legal_moves():
            v0 = won0 + by_rank[-1 if move == STOP else move >> 2]
            out[move] = HALF_POINTS_TOTAL - v0 if flip else v0
        return out


def final_value(state: RoundState, side: int, solver: Solver) -> int:
    """``side``'s half-points at the end of the round when both sides play perfectly from ``state``.

    ``state`` must be a two-player round with an empty stock (or finished).
    """
    won0 = 2 * state.points(0)
    v0 = won0 + (1 if state.last_winner == 0 else 0) if state.done else won0 + solver.solve(state)
    return v0 if side == 0 else HALF_POINTS_TOTAL - v0
