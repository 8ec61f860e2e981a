"""Hypothesis strategies drawn from the coefficient declarations: any rule set the declarations allow."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from sedma_elo import Match, PlayerStats, Rules
from sedma_elo.core.coefficients import COEFFICIENTS, MAX_RATING, MIN_RATING, RELATIONS, Coefficient, by_key
from sedma_elo.core.model import MAX_COUNT
from sedma_elo.core.rules_toml import rules_from_mapping

#: Ratings where K changes tier in the reference rules, and the limits: drawn often.
EDGE_RATINGS = (1199, 1200, 1201, 1799, 1800, 2199, 2200, MIN_RATING, MAX_RATING, 1000)


def _number(c: Coefficient) -> st.SearchStrategy[Any]:
    assert c.low is not None and c.high is not None
    integer = c.kind == "int"
    edges = [c.low, c.high, c.default] if c.default is not None else [c.low, c.high]
    parts: list[st.SearchStrategy[Any]] = [st.sampled_from([int(x) if integer else float(x) for x in edges])]
    full = st.integers(int(c.low), int(c.high)) if integer else st.floats(c.low, c.high)
    parts.append(full)
    if c.tune is not None and not c.tune.choices:
        lo, hi = c.tune.low, c.tune.high
        parts.append(st.integers(int(lo), int(hi)) if integer else st.floats(lo, hi))
    return st.one_of(parts)


@st.composite
def _tiers(draw: st.DrawFn) -> list[dict[str, int]]:
    c = by_key("k_factor.tiers")
    assert c.high is not None
    reference = [below for below, _ in c.default]  # type: ignore[attr-defined]
    belows = draw(
        st.one_of(
            st.just(reference),
            st.lists(st.sampled_from(EDGE_RATINGS) | st.integers(MIN_RATING, MAX_RATING), max_size=4),
        )
    )
    ks = st.integers(0, int(c.high)) | st.sampled_from([0, 16, 40])
    return [{"below": below, "k": draw(ks)} for below in sorted(set(belows))]


def _value(c: Coefficient) -> st.SearchStrategy[Any]:
    if c.kind == "choice":
        return st.sampled_from(c.choices)
    if c.kind == "bool":
        return st.booleans()
    if c.kind == "tiers":
        return _tiers()
    value = _number(c)
    return st.none() | value if c.optional else value


@st.composite
def any_rules(draw: st.DrawFn) -> Rules:
    """A valid rule set with every coefficient drawn from its declared range (edges and defaults often)."""
    flat: dict[str, Any] = {}
    for c in COEFFICIENTS:
        if c.kind != "text" and draw(st.booleans()):  # else keep the reference value
            flat[c.key] = draw(_value(c))
    for rel in RELATIONS:  # put related pairs in order instead of discarding the draw
        low = flat.get(rel.low_key, by_key(rel.low_key).default)
        high = flat.get(rel.high_key, by_key(rel.high_key).default)
        if low is None or high is None or low < high or (low == high and not rel.strict):
            continue
        if low == high:  # strict and equal: back to the (valid) reference pair
            low, high = by_key(rel.low_key).default, by_key(rel.high_key).default
        else:
            low, high = high, low
        flat[rel.low_key], flat[rel.high_key] = low, high
    data: dict[str, Any] = {}
    for key, value in flat.items():
        table, _, name = key.rpartition(".")
        (data.setdefault(table, {}) if table else data)[name] = value
    return rules_from_mapping(data)


COUNTS = st.integers(0, 3) | st.sampled_from([0, MAX_COUNT])
STATS = st.builds(PlayerStats, COUNTS, COUNTS, COUNTS, COUNTS)
RATINGS = st.sampled_from(EDGE_RATINGS) | st.integers(MIN_RATING, MAX_RATING) | st.integers(0, 3000)

#: The players of the drawn histories.
PLAYERS = ("p0", "p1", "p2", "p3", "p4")
WINNERS = st.sampled_from(["a", "b", "draw"])


@st.composite
def team_history(draw: st.DrawFn) -> list[Match]:
    """Up to 12 matches among :data:`PLAYERS`, each one against one or two against two, draws too."""
    out = []
    for i in range(draw(st.integers(1, 12))):
        size = draw(st.sampled_from([1, 2]))
        ids = draw(st.lists(st.sampled_from(PLAYERS), min_size=2 * size, max_size=2 * size, unique=True))
        stats = {p: draw(STATS) for p in ids}
        out.append(Match(tuple(ids[:size]), tuple(ids[size:]), draw(WINNERS), stats, match_id=f"m{i}"))  # type: ignore[arg-type]
    return out
