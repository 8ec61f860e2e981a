"""The numba-compiled exact solver of a round's *value* (match points), and the world sampler.

Imported lazily by :mod:`sedma_elo.game.value` (numba is slow to import; the compiled code is cached
on disk). The search plays exactly the rules of :class:`~sedma_elo.game.state.RoundState` (the same
pass, continue/stop and refill steps, in the same order), on hands kept as eight 3-bit rank counts:
only ranks matter in play, so two cards of one rank are one move. The stock is known (one sampled
world, or the real deck): ``stock[i]`` is the rank of deck card ``i``.

The value is side 0's signed stake of the round's result: ``+stake`` when side 0 wins, ``-stake``
when side 1 wins, the stake being ``stakes[0]`` (plain or 4 and last), ``stakes[1]`` (16er) or
``stakes[2]`` (24er). Search: fail-soft alpha-beta, a transposition table of (lower, upper) bounds
and the best move, keyed by the whole state (two 62-bit words), entries stamped with the world they
belong to so that a new world never needs the table cleared.

Transposition table layout (``tt``: int64 ``[size, 6]``, size a power of two): key a, key b, lower,
upper, stamp, best move (rank + 2, 1 for stop, 0 for none).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_TT_KA, _TT_KB, _TT_LO, _TT_HI, _TT_STAMP, _TT_BEST = range(6)
_STOP = -1
_GOLDEN = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as a signed 64-bit integer
_M1 = np.int64(-4658895280553007687)  # 0xBF58476D1CE4E5B9
_M2 = np.int64(-7723592293110705685)  # 0x94D049BB133111EB
# Ranks in the order they are tried: leading or throwing plain low cards first, points, sevens last.
_ORDER = np.array([1, 2, 4, 5, 6, 3, 7, 0], dtype=np.int64)
_ORDER_REV = np.array([0, 7, 3, 6, 5, 4, 2, 1], dtype=np.int64)


@njit(cache=True, inline="always")
def _count(h):  # type: ignore[no-untyped-def]
    total = 0
    for r in range(8):
        total += (h >> (3 * r)) & 7
    return total


@njit(cache=True, inline="always")
def _get(h0, h1, h2, h3, seat):  # type: ignore[no-untyped-def]
    if seat == 0:
        return h0
    if seat == 1:
        return h1
    if seat == 2:
        return h2
    return h3


@njit(cache=True, inline="always")
def _add(h0, h1, h2, h3, seat, delta):  # type: ignore[no-untyped-def]
    if seat == 0:
        h0 += delta
    elif seat == 1:
        h1 += delta
    elif seat == 2:
        h2 += delta
    else:
        h3 += delta
    return h0, h1, h2, h3


@njit(cache=True)
def final_value(won0, flags, last_side, stakes):  # type: ignore[no-untyped-def]
    """Side 0's signed stake of a finished round: ``won0`` points, ``flags`` bit s = side s took a trick."""
    w = 0 if won0 > 4 or (won0 == 4 and last_side == 0) else 1
    pts = won0 if w == 0 else 8 - won0
    if flags & (1 << (1 - w)) == 0:
        s = stakes[2]
    elif pts == 8:
        s = stakes[1]
    else:
        s = stakes[0]
    return s if w == 0 else -s


@njit(cache=True, inline="always")
def _win_range(won_y, rest, y_took, stakes):  # type: ignore[no-untyped-def]
    """The least and greatest stake side X may still win, given side Y's points ``won_y``, the
    points ``rest`` not yet taken and whether Y has taken a trick (``(1, 0)`` when X cannot win).
    Generous: a stake counts as possible unless the points or tricks so far rule it out."""
    lo = 1 << 40
    hi = -(1 << 40)
    if won_y > 4:
        return 1, 0
    if won_y > 0 or rest > 0:
        lo = min(lo, stakes[0])
        hi = max(hi, stakes[0])
    if won_y == 0:
        lo = min(lo, stakes[1])
        hi = max(hi, stakes[1])
        if not y_took:
            lo = min(lo, stakes[2])
            hi = max(hi, stakes[2])
    return lo, hi


@njit(cache=True, inline="always")
def _bounds(won0, won1, rest, flags, stakes):  # type: ignore[no-untyped-def]
    """The least and greatest value side 0 may still end with (see :func:`_win_range`)."""
    lo0, hi0 = _win_range(won1, rest, flags & 2, stakes)
    lo1, hi1 = _win_range(won0, rest, flags & 1, stakes)
    if lo1 <= hi1:  # side 1 can still win: its least stake is side 0's best outcome
        lb = -hi1
        ub = hi0 if lo0 <= hi0 else -lo1
    else:
        lb = lo0
        ub = hi0
    return lb, ub


@njit(cache=True)
def _play(  # type: ignore[no-untyped-def]
    h0, h1, h2, h3, n, stock, spts, pos, to_move, leader, winner, deciding, led, tp, won0, flags,
    r, alpha, beta, stakes, tt, stamp, counter,
):  # fmt: skip
    """Side 0's value, under perfect play, after the player to move plays rank ``r`` (``-1``: stop).

    The move is applied exactly as :meth:`RoundState.play` does; then fail-soft alpha-beta within
    ``(alpha, beta)``. One self-recursive function (numba compiles self-recursion reliably).
    """
    end = False
    if r == _STOP:
        end = True
    else:
        p = to_move
        h0, h1, h2, h3 = _add(h0, h1, h2, h3, p, -(1 << (3 * r)))
        if r == 3 or r == 7:
            tp += 1
        if led < 0:
            led = r
            winner = p
        elif deciding:
            deciding = 0
            winner = p
        elif r == led or r == 0:
            winner = p
        nxt = p + 1 if p + 1 < n else 0
        if p != leader and nxt == leader:
            lh = _get(h0, h1, h2, h3, leader)
            if (winner ^ leader) & 1 == 0:
                end = True
            elif ((lh >> (3 * led)) & 7) or (lh & 7):
                deciding = 1
                to_move = leader
            else:
                end = True
        else:
            to_move = nxt
    if end:
        w = winner
        side = w & 1
        if side == 0:
            won0 += tp
        flags |= 1 << side
        if pos < 32:
            need = 4 - _count(_get(h0, h1, h2, h3, w))
            for _ in range(need):
                for i in range(n):
                    if pos < 32:
                        h0, h1, h2, h3 = _add(h0, h1, h2, h3, (w + i) % n, 1 << (3 * stock[pos]))
                        pos += 1
        if _get(h0, h1, h2, h3, w) == 0:
            return final_value(won0, flags, side, stakes)
        to_move = w
        leader = w
        winner = w
        deciding = 0
        led = -1
        tp = 0
    vmax = stakes[0]
    if stakes[1] > vmax:
        vmax = stakes[1]
    if stakes[2] > vmax:
        vmax = stakes[2]
    # What can still happen: side 0 ends with won0 .. won0 + rest points, side 1 has won1 already.
    rest = tp + spts[pos]
    for hh in (h0, h1, h2, h3):
        rest += ((hh >> 9) & 7) + ((hh >> 21) & 7)
    won1 = 8 - won0 - rest
    lb, ub = _bounds(won0, won1, rest, flags, stakes)
    if lb >= beta or lb == ub:
        return lb
    if ub <= alpha:
        return ub
    ka = h0 | (h1 << 24) | (pos << 48) | (to_move << 54) | (leader << 56) | (deciding << 58) | (winner << 59)
    kb = h2 | (h3 << 24) | ((led + 1) << 48) | (tp << 52) | (won0 << 56) | (flags << 60)
    x = ka * _M1 ^ kb * _M2
    x ^= x >> 31
    mask = tt.shape[0] - 1
    slot = x & mask
    lo = -vmax
    hi = vmax
    best_hint = 0
    if tt[slot, _TT_STAMP] == stamp and tt[slot, _TT_KA] == ka and tt[slot, _TT_KB] == kb:
        lo = tt[slot, _TT_LO]
        hi = tt[slot, _TT_HI]
        if lo >= beta or lo == hi:
            return lo
        if hi <= alpha:
            return hi
        best_hint = tt[slot, _TT_BEST]
    counter[0] += 1
    a = alpha if alpha > lo else lo
    b = beta if beta < hi else hi
    a0 = a
    b0 = b
    maximize = (to_move & 1) == 0
    best = -vmax - 1 if maximize else vmax + 1
    best_move = 0
    hand = _get(h0, h1, h2, h3, to_move)
    # Candidate moves as 4-bit codes (rank + 2, or 1 for stop) packed in ``ml``, the table's best
    # move first (no array: an allocation per node would cost more than the node).
    ml = 0
    nm = 0
    if best_hint:
        ml = best_hint
        nm = 1
    if deciding:
        if (hand >> (3 * led)) & 7 and best_hint != led + 2:
            ml |= (led + 2) << (4 * nm)
            nm += 1
        if led != 0 and hand & 7 and best_hint != 2:
            ml |= 2 << (4 * nm)
            nm += 1
        if best_hint != 1:
            ml |= 1 << (4 * nm)
            nm += 1
    elif led < 0:
        for k in range(8):
            r = _ORDER[k]
            if (hand >> (3 * r)) & 7 and best_hint != r + 2:
                ml |= (r + 2) << (4 * nm)
                nm += 1
    elif led != 0:
        if (hand >> (3 * led)) & 7 and best_hint != led + 2:
            ml |= (led + 2) << (4 * nm)
            nm += 1
        if hand & 7 and best_hint != 2:
            ml |= 2 << (4 * nm)
            nm += 1
        for k in range(8):
            r = _ORDER[k]
            if r != led and r != 0 and (hand >> (3 * r)) & 7 and best_hint != r + 2:
                ml |= (r + 2) << (4 * nm)
                nm += 1
    else:
        for k in range(8):
            r = _ORDER_REV[k]
            if (hand >> (3 * r)) & 7 and best_hint != r + 2:
                ml |= (r + 2) << (4 * nm)
                nm += 1
    for i in range(nm):
        code = (ml >> (4 * i)) & 15
        v = _play(
            h0, h1, h2, h3, n, stock, spts, pos, to_move, leader, winner, deciding, led, tp, won0, flags,
            code - 2, a, b, stakes, tt, stamp, counter,
        )  # fmt: skip
        if maximize:
            if v > best:
                best = v
                best_move = code
                if v > a:
                    a = v
        elif v < best:
            best = v
            best_move = code
            if v < b:
                b = v
        if a >= b:
            break
    if best <= a0:
        nlo, nhi = lo, best
    elif best >= b0:
        nlo, nhi = best, hi
    else:
        nlo, nhi = best, best
    tt[slot, _TT_KA] = ka
    tt[slot, _TT_KB] = kb
    tt[slot, _TT_LO] = nlo
    tt[slot, _TT_HI] = nhi
    tt[slot, _TT_STAMP] = stamp
    tt[slot, _TT_BEST] = best_move
    return best


@njit(cache=True)
def root_values(  # type: ignore[no-untyped-def]
    hands, n, stock, pos, to_move, leader, winner, deciding, led, tp, won0, flags, cands, stakes, tt, stamp,
    counter,
):  # fmt: skip
    """Side 0's exact value after each candidate rank in ``cands`` (``-1`` = stop); ``hands`` packed."""
    vmax = max(stakes[0], max(stakes[1], stakes[2]))
    # spts[i]: points among the deck cards from position i on (the stock's points when i = pos).
    spts = np.zeros(33, dtype=np.int64)
    for i in range(31, -1, -1):
        spts[i] = spts[i + 1] + (1 if stock[i] == 3 or stock[i] == 7 else 0)
    for i in range(pos):
        spts[i] = spts[pos]
    out = np.empty(cands.shape[0], dtype=np.int64)
    for i in range(cands.shape[0]):
        out[i] = _play(
            hands[0], hands[1], hands[2], hands[3], n, stock, spts, pos, to_move, leader, winner, deciding,
            led, tp, won0, flags, cands[i], -vmax - 1, vmax + 1, stakes, tt, stamp, counter,
        )  # fmt: skip
    return out


@njit(cache=True)
def _splitmix(state):  # type: ignore[no-untyped-def]
    state = state + _GOLDEN
    z = state
    z = (z ^ ((z >> 30) & 0x3FFFFFFFF)) * _M1
    z = (z ^ ((z >> 27) & 0x1FFFFFFFFF)) * _M2
    return state, z ^ ((z >> 31) & 0x1FFFFFFFF)


@njit(cache=True)
def _below(z, bound):  # type: ignore[no-untyped-def]
    """``z`` (any 64-bit pattern) reduced to ``0..bound-1`` through its top 32 bits."""
    return (((z >> 32) & 0xFFFFFFFF) * bound) >> 32


@njit(cache=True)
def sampled_values(  # type: ignore[no-untyped-def]
    known, unseen, listed, sizes, n, pos, to_move, leader, winner, deciding, led, tp, won0,
    flags, cands, stakes, tt, stamp0, seed, first, count, counter,
):  # fmt: skip
    """Side 0's exact value of each candidate in worlds ``first .. first+count-1``: ``[count, len(cands)]``.

    World ``k`` deals the ``unseen`` cards (card codes) by a Fisher-Yates shuffle driven by SplitMix64
    seeded with ``seed + k * golden``: the first ``sizes[s]`` go to seat ``s`` (in seat order; the
    mover's size is 0), the rest become the stock in order. ``known[s]`` holds the packed hand of each
    seat already known (the mover's). World ``k`` is the same whatever ``first`` and ``count`` are.
    When ``listed`` has rows, world ``k`` is row ``k`` of ``listed`` instead (no shuffle).
    """
    m = unseen.shape[0]
    out = np.empty((count, cands.shape[0]), dtype=np.int64)
    cards = np.empty(m, dtype=np.int64)
    stock = np.zeros(32, dtype=np.int64)
    hands = np.empty(4, dtype=np.int64)
    for k in range(count):
        if listed.shape[0] > 0:
            for i in range(m):
                cards[i] = listed[first + k, i]
        else:
            state = seed + (first + k) * _GOLDEN
            for i in range(m):
                cards[i] = unseen[i]
            for i in range(m - 1, 0, -1):
                state, z = _splitmix(state)
                j = _below(z, i + 1)
                t = cards[i]
                cards[i] = cards[j]
                cards[j] = t
        for s in range(4):
            hands[s] = known[s]
        c = 0
        for s in range(n):
            for _ in range(sizes[s]):
                hands[s] += 1 << (3 * (cards[c] >> 2))
                c += 1
        for i in range(pos, 32):
            stock[i] = cards[c] >> 2
            c += 1
        row = root_values(
            hands, n, stock, pos, to_move, leader, winner, deciding, led, tp, won0, flags, cands, stakes, tt,
            stamp0 + k, counter,
        )  # fmt: skip
        for j in range(cands.shape[0]):
            out[k, j] = row[j]
    return out
