"""The numba-compiled replay loop. Imported lazily by :mod:`sedma_elo.batch.kernel` (numba is slow to import).

Every operation mirrors :func:`sedma_elo.core.engine.rate` in the same order and precision, so that the
results are identical bit for bit: bonus, malus and the clamp in float32 when the rules say so
(numba would promote ``int * float32`` to float64, hence the explicit casts), the rest in float64.
The layout of the parameter arrays is defined once, in :func:`sedma_elo.batch.kernel.kernel_params`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.coefficients import K_MODES, by_key
from .kernel import LAYOUT

# Slots in the parameter arrays, looked up by TOML key in the layout derived from the coefficient
# declarations. numba freezes globals as constants and keys its disk cache on this file, so a
# change of the layout comes with a change here (the new coefficient's maths).
_S = LAYOUT.slot
_PER16, _CAP16 = _S["bonus.per_16"], _S["bonus.max_16"]
_PER24, _CAP24 = _S["bonus.per_24"], _S["bonus.max_24"]
_PER4, _CAP4 = _S["bonus.per_4_and_last"], _S["bonus.max_4_and_last"]
_MALUS, _MALUS_CAP, _SMIN, _SMAX = _S["malus.per_bad_move"], _S["malus.max"], _S["score.min"], _S["score.max"]
_BASE, _SCALE = LAYOUT.base, LAYOUT.scale  # base score, then bonus share, of a win, a loss and a draw
_NEW_MULT, _M_SCALE = _S["k_factor.new_player_multiplier"], _S["margin.scale"]
_W16, _W24, _W4 = _S["margin.weight_16"], _S["margin.weight_24"], _S["margin.weight_4_and_last"]
_WBAD, _M_MIN, _M_MAX = _S["margin.weight_bad_moves"], _S["margin.min"], _S["margin.max"]
_ARITH, _ROUNDING, _KMODE = _S["arithmetic"], _S["rounding"], _S["k_factor.mode"]
_NEW_GAMES, _ZERO_SUM, _FLOOR = _S["k_factor.new_player_games"], _S["update.zero_sum"], _S["update.floor"]
_ZS_EST, _BALANCE = _S["update.zero_sum_established"], _S["update.newcomer_balance"]
_ZS_NEW = _S["update.zero_sum_newcomers"]
_BAL_GAMES = _S["update.newcomer_balance_games"]
_MARGIN, _LO, _HI = LAYOUT.margin_on, LAYOUT.low, LAYOUT.high
# Codes of the choices (their index in the declaration).
_FLOAT32 = by_key("arithmetic").choices.index("float32")
_HALF_UP = by_key("rounding").choices.index("half_up")
_K_RATING, _K_GAMES, _K_SUM, _K_PRODUCT, _K_MIN = (
    K_MODES.index(mode) for mode in ("rating", "games", "sum", "product", "min")
)


@njit(cache=True)
def _score32(outcome, bad, c16, c24, c4, p):  # type: ignore[no-untyped-def]
    b16 = np.float32(c16) * p[_PER16]
    b16 = b16 if b16 < p[_CAP16] else p[_CAP16]
    b24 = np.float32(c24) * p[_PER24]
    b24 = b24 if b24 < p[_CAP24] else p[_CAP24]
    b4 = np.float32(c4) * p[_PER4]
    b4 = b4 if b4 < p[_CAP4] else p[_CAP4]
    total = (b16 + b24) + b4
    # Base and bonus share by outcome (0 win, 1 loss, 2 draw) come from p[_BASE + outcome] and
    # p[_SCALE + outcome]: table reads instead of branches the CPU would mispredict.
    malus = np.float32(bad) * p[_MALUS]
    malus = malus if malus < p[_MALUS_CAP] else p[_MALUS_CAP]
    value = (p[_BASE + outcome] + total * p[_SCALE + outcome]) - malus
    # Unity's Clamp tests the lower bound first; with min < max, max-then-min is the same.
    value = value if value > p[_SMIN] else p[_SMIN]
    value = value if value < p[_SMAX] else p[_SMAX]
    return np.float64(value)


@njit(cache=True)
def _score64(outcome, bad, c16, c24, c4, p):  # type: ignore[no-untyped-def]
    b16 = np.float64(c16) * p[_PER16]
    b16 = b16 if b16 < p[_CAP16] else p[_CAP16]
    b24 = np.float64(c24) * p[_PER24]
    b24 = b24 if b24 < p[_CAP24] else p[_CAP24]
    b4 = np.float64(c4) * p[_PER4]
    b4 = b4 if b4 < p[_CAP4] else p[_CAP4]
    total = (b16 + b24) + b4
    malus = np.float64(bad) * p[_MALUS]
    malus = malus if malus < p[_MALUS_CAP] else p[_MALUS_CAP]
    value = (p[_BASE + outcome] + total * p[_SCALE + outcome]) - malus
    value = value if value > p[_SMIN] else p[_SMIN]
    value = value if value < p[_SMAX] else p[_SMAX]
    return value


@njit(cache=True)
def _round(value, half_up):  # type: ignore[no-untyped-def]
    if half_up:
        floor = math.floor(value)
        return np.int64(floor + 1.0) if value - floor >= 0.5 else np.int64(floor)
    return np.int64(np.rint(value))


@njit(cache=True)
def _keep(value, low, high):  # type: ignore[no-untyped-def]
    value = value if value > low else np.float64(low)
    return value if value < high else np.float64(high)


@njit(cache=True)
def _player_k(rating, games, tier_below, tier_k, kmode, k_games, new_games, new_mult):  # type: ignore[no-untyped-def]
    # tier_k has one more entry than tier_below (k_top); the boundaries are sorted, so the
    # tier index is the number of boundaries at or below the rating (no unpredictable branch).
    index = 0
    for j in range(tier_below.size):
        index += rating >= tier_below[j]
    k = np.float64(tier_k[index])
    if kmode != _K_RATING:
        g = k_games[games]
        if kmode == _K_GAMES:
            k = g
        elif kmode == _K_SUM:
            k = k + g
        elif kmode == _K_PRODUCT:
            k = k * g
        elif kmode == _K_MIN:
            k = k if k < g else g
        else:
            k = k if k > g else g
    # k * 1.0 == k exactly, so the select matches the engine's conditional multiplication.
    return k * (new_mult if games < new_games else 1.0)


@njit(cache=True)
def _dominance(counts, i, side, p):  # type: ignore[no-untyped-def]
    # counts columns: bad_a, bad_b, 16_a, 16_b, 24_a, 24_b, 4_a, 4_b
    return (
        p[_W16] * np.float64(counts[i, 2 + side])
        + p[_W24] * np.float64(counts[i, 4 + side])
        + p[_W4] * np.float64(counts[i, 6 + side])
        + p[_WBAD] * np.float64(counts[i, side])
    )


@njit(cache=True)
def replay_loop(  # type: ignore[no-untyped-def]
    player_a,
    player_b,
    winner,
    counts,
    ratings,
    games,
    tier_below,
    tier_k,
    p32,
    p64,
    ip,
    expected_table,
    k_games,
    record,
    before,
    after,
    expected,
):
    """Replay matches in order, updating ``ratings`` and ``games`` in place.

    Returns -1, or ``2 * i + side`` for the first match ``i`` whose player on ``side`` (0 = a)
    has a rating outside the allowed range before it (the ratings of that match are untouched).
    """
    f32 = ip[_ARITH] == _FLOAT32
    half_up = ip[_ROUNDING] == _HALF_UP
    kmode = ip[_KMODE]
    new_games = ip[_NEW_GAMES]
    zero_sum = ip[_ZERO_SUM] != 0
    zero_sum_est = ip[_ZS_EST] != 0
    zero_sum_new = ip[_ZS_NEW] != 0
    floor = ip[_FLOOR]  # MIN_RATING when the rules have no floor
    margin = ip[_MARGIN] != 0
    lo = ip[_LO]
    hi = ip[_HI]
    new_mult = p64[_NEW_MULT]
    balance = p64[_BALANCE] if new_games > 0 else 0.0
    # formula.newcomer_share: the share of a new player's change the multiplier added (with
    # newcomer_balance_games: their K above their K at new_games games, per match below).
    share = (new_mult - 1.0) / new_mult if new_mult > 1.0 else 0.0
    bal_games = ip[_BAL_GAMES] != 0
    offset = (expected_table.size - 1) // 2
    span = np.float64(hi - lo)
    margin_sign = np.array([1.0, -1.0, 0.0])
    for i in range(player_a.size):
        a = player_a[i]
        b = player_b[i]
        ra = ratings[a]
        rb = ratings[b]
        if ra < lo or ra > hi:
            return 2 * i
        if rb < lo or rb > hi:
            return 2 * i + 1
        w = winner[i]
        oa = w
        ob = (1 - w) if w < 2 else 2
        if f32:
            sa = _score32(oa, counts[i, 0], counts[i, 2], counts[i, 4], counts[i, 6], p32)
            sb = _score32(ob, counts[i, 1], counts[i, 3], counts[i, 5], counts[i, 7], p32)
        else:
            sa = _score64(oa, counts[i, 0], counts[i, 2], counts[i, 4], counts[i, 6], p64)
            sb = _score64(ob, counts[i, 1], counts[i, 3], counts[i, 5], counts[i, 7], p64)
        ea = expected_table[rb - ra + offset]
        eb = expected_table[ra - rb + offset]
        ga = games[a]
        gb = games[b]
        ka = _player_k(ra, ga, tier_below, tier_k, kmode, k_games, new_games, new_mult)
        kb = _player_k(rb, gb, tier_below, tier_k, kmode, k_games, new_games, new_mult)
        k0a = ka  # before the margin multiplier: newcomer_balance_games' share compares these
        k0b = kb
        if margin:
            da = _dominance(counts, i, 0, p64)
            db = _dominance(counts, i, 1, p64)
            # winner's minus loser's dominance (0 on a draw); negation is exact, so
            # -(da - db) == db - da as the engine computes it.
            m = margin_sign[w] * (da - db)
            mult = 1.0 + p64[_M_SCALE] * m
            mult = mult if mult > p64[_M_MIN] else p64[_M_MIN]
            mult = mult if mult < p64[_M_MAX] else p64[_M_MAX]
            ka = ka * mult
            kb = kb * mult
        # Every update is kept in [floor, hi] (floor >= lo). The float is clamped before it is
        # rounded so that a huge K cannot overflow int64; for integer bounds that is the same
        # as the engine's rounding first and clamping then.
        # zero_sum_established / zero_sum_newcomers: the transfer for a match of two
        # established players / of two new players (the engine's Rules.transfers).
        if (
            zero_sum
            or (zero_sum_est and ga >= new_games and gb >= new_games)
            or (zero_sum_new and ga < new_games and gb < new_games)
        ):
            shared = (ka + kb) / 2.0
            s = (sa + (1.0 - sb)) * 0.5
            t = shared * (s - ea)
            t = t if t > -span else -span
            t = t if t < span else span
            moved = _round(t, half_up)
            na = np.int64(_keep(np.float64(ra + moved), floor, hi))
            nb = np.int64(_keep(np.float64(rb - moved), floor, hi))
        else:
            da = ka * (sa - ea)
            db = kb * (sb - eb)
            if balance != 0.0:
                # update.newcomer_balance (formula.newcomer_gifts): each side gives back part of
                # the new opponent's extra change; one opponent, so the engine's "/ 1" is exact.
                share_a = share
                share_b = share
                if bal_games:
                    if ga < new_games:
                        settled = _player_k(
                            ra, new_games, tier_below, tier_k, kmode, k_games, new_games, new_mult
                        )
                        share_a = 1.0 - settled / k0a if k0a > settled else 0.0
                    if gb < new_games:
                        settled = _player_k(
                            rb, new_games, tier_below, tier_k, kmode, k_games, new_games, new_mult
                        )
                        share_b = 1.0 - settled / k0b if k0b > settled else 0.0
                gift_b = balance * (da * share_a) if ga < new_games else 0.0
                gift_a = balance * (db * share_b) if gb < new_games else 0.0
                if gb < new_games:
                    da = da - gift_a
                if ga < new_games:
                    db = db - gift_b
            na = _round(_keep(ra + da, floor, hi), half_up)
            nb = _round(_keep(rb + db, floor, hi), half_up)
        ratings[a] = na
        ratings[b] = nb
        games[a] = ga + 1
        games[b] = gb + 1
        if record:
            before[i, 0] = ra
            before[i, 1] = rb
            after[i, 0] = na
            after[i, 1] = nb
            expected[i, 0] = ea
            expected[i, 1] = eb
    return -1


@njit(cache=True)
def expected_table(span):  # type: ignore[no-untyped-def]
    """``E(d) = 1 / (1 + 10^(d / 400))`` for every integer ``d`` in ``[-span, span]`` (index d + span)."""
    out = np.empty(2 * span + 1, dtype=np.float64)
    for i in range(out.size):
        out[i] = 1.0 / (1.0 + math.pow(10.0, (i - span) / 400.0))
    return out


@njit(cache=True)
def k_games_table(n, a, b, c, k_min):  # type: ignore[no-untyped-def]
    """The games-played curve ``max(a / (g + b)^c, k_min)`` for ``g`` in ``[0, n)``."""
    out = np.empty(n, dtype=np.float64)
    for g in range(n):
        value = a / math.pow(g + b, c)
        out[g] = value if value > k_min else k_min
    return out
