"""The compiled batch kernel against the golden vectors and against a plain loop of ``rate``."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedma_elo import REFERENCE_RULES, Match, PlayerStats, Rules, ValidationError, rate
from sedma_elo.batch.history import HistoryArrays
from sedma_elo.batch.kernel import kernel_params, run_kernel
from sedma_elo.batch.replay import replay
from sedma_elo.core.model import MAX_COUNT
from sedma_elo.core.rules import K_MODES, MAX_RATING, BonusRule, KTier

GOLDEN = Path(__file__).parents[1] / "golden" / "reference_vectors.csv"


def _golden_rows() -> list[dict[str, str]]:
    with GOLDEN.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _oracle(
    matches: list[Match], rules: Rules, ratings: dict[str, int]
) -> list[tuple[int, int, int, int, float]]:
    """A plain loop of ``rate``: per match (before_a, before_b, after_a, after_b, expected_a)."""
    current = dict(ratings)
    games: dict[str, int] = {}
    out = []
    for match in matches:
        result = rate(match, current, rules, games_played=games)
        a, b = result.changes
        out.append((a.rating_before, b.rating_before, a.rating_after, b.rating_after, a.expected))
        for change in result.changes:
            current[change.player_id] = change.rating_after
            games[change.player_id] = games.get(change.player_id, 0) + 1
    return out


def _kernel_rows(
    matches: list[Match], rules: Rules, ratings: dict[str, int]
) -> list[tuple[int, int, int, int, float]]:
    result = replay(matches, rules, initial_ratings=ratings, record=True, method="kernel")
    rec = result.record
    assert rec is not None
    return [
        (int(b[0]), int(b[1]), int(a[0]), int(a[1]), float(e[0]))
        for b, a, e in zip(rec.before, rec.after, rec.expected, strict=True)
    ]


@pytest.mark.slow
def test_every_golden_vector() -> None:
    """Each of the 3,000 C# reference vectors, replayed as one batch, gives the C# new ratings."""
    rows = _golden_rows()
    matches, ratings, expected = [], {}, []
    for i, row in enumerate(rows):
        a, b = f"a{i}", f"b{i}"
        ratings[a], ratings[b] = int(row["rating_a"]), int(row["rating_b"])
        stats_a = PlayerStats(
            int(row["bad_moves_a"]),
            int(row["won_by_16_a"]),
            int(row["won_by_24_a"]),
            int(row["won_by_4_and_last_a"]),
        )
        stats_b = PlayerStats(
            int(row["bad_moves_b"]),
            int(row["won_by_16_b"]),
            int(row["won_by_24_b"]),
            int(row["won_by_4_and_last_b"]),
        )
        winner = "a" if row["player_a_won"] == "true" else "b"
        matches.append(Match.single(a, b, winner, stats_a, stats_b, match_id=str(i)))
        expected.append((int(row["new_rating_a"]), int(row["new_rating_b"])))
    result = replay(matches, REFERENCE_RULES, initial_ratings=ratings, method="kernel")
    got = [(result.ratings[f"a{i}"], result.ratings[f"b{i}"]) for i in range(len(rows))]
    assert got == expected


def test_expected_scores_are_the_engine_ones() -> None:
    """The kernel's expected score equals ``1 / (1 + 10^(d/400))`` with the C pow for every sampled d."""
    players = [("p", "q")]
    for diff in (-99_999, -4000, -401, -1, 0, 1, 7, 400, 12345, 99_999):
        low = -MAX_RATING if diff >= 0 else MAX_RATING
        ratings = {"p": low, "q": low + diff}
        result = replay(
            [Match.single(*players[0], "a")], initial_ratings=ratings, record=True, method="kernel"
        )
        assert result.record is not None
        assert result.record.expected[0, 0] == 1.0 / (1.0 + math.pow(10.0, diff / 400.0))


def test_updates_stay_in_the_rating_range_like_rate() -> None:
    """A win at MAX_RATING keeps the rating at MAX_RATING (kernel and rate), so later matches still rate."""
    matches = [Match.single("top", "x", "a", match_id="m1"), Match.single("top", "y", "a", match_id="m2")]
    start = {"top": MAX_RATING, "x": MAX_RATING, "y": MAX_RATING}
    expected = _oracle(matches, REFERENCE_RULES, start)
    result = replay(matches, initial_ratings=start, record=True, method="kernel")
    assert result.record is not None
    assert result.record.after[:, 0].tolist() == [MAX_RATING, MAX_RATING]
    assert [row[2] for row in expected] == [MAX_RATING, MAX_RATING]


def test_out_of_range_starting_rating_is_refused_like_rate() -> None:
    """A starting rating above MAX_RATING is refused naming the player, as rate refuses it."""
    history = HistoryArrays.from_matches([Match.single("top", "x", "a", match_id="m1")])
    ratings = np.array([MAX_RATING + 1, 1000], dtype=np.int64)
    with pytest.raises(ValidationError) as from_rate:
        rate(history.to_matches()[0], {"top": MAX_RATING + 1})
    with pytest.raises(ValidationError) as from_kernel:
        run_kernel(history, REFERENCE_RULES, ratings, np.zeros(2, dtype=np.int64))
    assert from_kernel.value.field == from_rate.value.field == "ratings.top"


def test_reference_params_are_flat_numbers() -> None:
    """The reference rules flatten to float32 coefficients, the tier boundaries and K (top last)."""
    params = kernel_params(REFERENCE_RULES)
    assert params.tier_below.tolist() == [1200, 1800, 2200]
    assert params.tier_k.tolist() == [40, 32, 24, 16]
    assert params.p32.dtype == np.float32
    assert float(params.p32[0]) == float(np.float32(0.05))


def test_run_kernel_updates_arrays_in_place() -> None:
    """run_kernel writes the final ratings and games into the given arrays."""
    history = HistoryArrays.from_matches([Match.single("a", "b", "a"), Match.single("b", "a", "a")])
    ratings = np.array([1000, 1000], dtype=np.int64)
    games = np.zeros(2, dtype=np.int64)
    run_kernel(history, REFERENCE_RULES, ratings, games)
    # By hand: a wins 1000-1000 (+20 -> 1020, b 980); b (980, K 40) beats a (1020): E_b = 1/(1+10^(40/400)).
    e_b = 1 / (1 + 10 ** (40 / 400))
    assert ratings.tolist() == [round(1020 - 40 * (1 - e_b)), round(980 + 40 * (1 - e_b))]
    assert games.tolist() == [2, 2]


# ---------------------------------------------------------------------------- random rules and histories
unit = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def rules_strategy(draw: st.DrawFn) -> Rules:
    belows = sorted(set(draw(st.lists(st.integers(-500, 3000), max_size=3))))
    tiers = tuple(KTier(b, draw(st.integers(0, 64))) for b in belows)
    score_min = draw(st.floats(-0.5, 0.9))
    initial = draw(st.integers(500, 2500))
    return REFERENCE_RULES.replace(
        initial_rating=initial,
        k_tiers=tiers,
        k_top=draw(st.integers(0, 64)),
        bonus_16=BonusRule(draw(unit), draw(unit)),
        bonus_24=BonusRule(draw(unit), draw(unit)),
        bonus_4_and_last=BonusRule(draw(unit), draw(unit)),
        malus_per_bad_move=draw(unit),
        malus_cap=draw(unit),
        loser_bonus_scale=draw(unit),
        draw_bonus_scale=draw(unit),
        score_min=score_min,
        score_max=draw(st.floats(score_min + 0.01, 1.5)),
        rounding=draw(st.sampled_from(["half_even", "half_up"])),
        arithmetic=draw(st.sampled_from(["float32", "float64"])),
        k_mode=draw(st.sampled_from(K_MODES)),
        k_games_a=draw(st.floats(0.0, 300.0)),
        k_games_b=draw(st.floats(0.01, 50.0)),
        k_games_c=draw(st.floats(0.0, 2.0)),
        k_games_min=draw(st.floats(0.0, 40.0)),
        k_new_player_games=draw(st.integers(0, 10)),
        k_new_player_multiplier=draw(st.floats(0.0, 3.0)),
        zero_sum=draw(st.booleans()),
        zero_sum_established=draw(st.booleans()),
        zero_sum_newcomers=draw(st.booleans()),
        newcomer_balance=draw(st.one_of(st.just(0.0), unit)),
        newcomer_balance_games=draw(st.booleans()),
        rating_floor=draw(st.one_of(st.none(), st.integers(initial - 300, initial))),
        margin_scale=draw(st.one_of(st.just(0.0), st.floats(-1.0, 1.0))),
        margin_weight_16=draw(st.floats(-3.0, 3.0)),
        margin_weight_24=draw(st.floats(-3.0, 3.0)),
        margin_weight_4_and_last=draw(st.floats(-3.0, 3.0)),
        margin_weight_bad_moves=draw(st.floats(-3.0, 3.0)),
        margin_min=draw(st.floats(0.0, 1.0)),
        margin_max=draw(st.floats(1.0, 3.0)),
    )


count = st.one_of(st.integers(0, 5), st.integers(0, 40), st.sampled_from([MAX_COUNT, MAX_COUNT - 1, 999_999]))


@st.composite
def history_strategy(draw: st.DrawFn) -> list[Match]:
    n_players = draw(st.integers(2, 6))
    players = [f"p{i}" for i in range(n_players)]
    matches = []
    for i in range(draw(st.integers(1, 40))):
        a, b = draw(st.lists(st.sampled_from(players), min_size=2, max_size=2, unique=True))
        winner = draw(st.sampled_from(["a", "b", "draw"]))
        stats_a = PlayerStats(draw(count), draw(count), draw(count), draw(count))
        stats_b = PlayerStats(draw(count), draw(count), draw(count), draw(count))
        matches.append(Match.single(a, b, winner, stats_a, stats_b, match_id=f"m{i}"))
    return matches


@settings(max_examples=150, deadline=None)
@given(rules=rules_strategy(), matches=history_strategy(), data=st.data())
def test_kernel_agrees_with_rate_loop(rules: Rules, matches: list[Match], data: st.DataObject) -> None:
    """Random rules (every variant) and histories (draws, extreme counts): kernel == loop of rate."""
    ratings = {p: data.draw(st.integers(-2000, 4000)) for p in ("p0", "p1", "p2")}
    try:
        expected = _oracle(matches, rules, ratings)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as caught:
            _kernel_rows(matches, rules, ratings)
        assert caught.value.field == exc.field
        return
    assert _kernel_rows(matches, rules, ratings) == expected


VARIANTS = {
    "reference": REFERENCE_RULES,
    "float64": REFERENCE_RULES.replace(arithmetic="float64"),
    "half_up": REFERENCE_RULES.replace(rounding="half_up"),
    **{f"k_{mode}": REFERENCE_RULES.replace(k_mode=mode, k_games_min=8.0) for mode in K_MODES[1:]},
    "new_player": REFERENCE_RULES.replace(k_new_player_games=15, k_new_player_multiplier=1.75),
    "zero_sum": REFERENCE_RULES.replace(zero_sum=True),
    "zero_sum_established": REFERENCE_RULES.replace(
        zero_sum_established=True, k_new_player_games=4, k_new_player_multiplier=2.0, score_max=1.1,
    ),
    "newcomer_balance": REFERENCE_RULES.replace(
        zero_sum_established=True, k_new_player_games=6, k_new_player_multiplier=1.8, newcomer_balance=0.7,
        score_max=1.05,
    ),
    "zero_sum_newcomers": REFERENCE_RULES.replace(
        zero_sum_established=True, zero_sum_newcomers=True, k_new_player_games=6, k_new_player_multiplier=1.8,
        newcomer_balance=1.0, score_max=1.05,
    ),
    "newcomer_balance_margin": REFERENCE_RULES.replace(
        k_new_player_games=8, k_new_player_multiplier=2.5, newcomer_balance=1.0, margin_scale=0.2,
    ),
    "newcomer_balance_games": REFERENCE_RULES.replace(
        zero_sum_established=True, zero_sum_newcomers=True, k_mode="max", k_games_a=300.0, k_games_b=5.0,
        k_games_c=0.6, k_games_min=10.0, k_new_player_games=8, k_new_player_multiplier=1.4,
        newcomer_balance=1.0, newcomer_balance_games=True, score_max=1.05, margin_scale=0.2,
    ),
    "floor": REFERENCE_RULES.replace(rating_floor=960),
    "margin": REFERENCE_RULES.replace(margin_scale=0.25, margin_weight_bad_moves=-0.5),
    "all": REFERENCE_RULES.replace(
        k_mode="product", k_games_a=3.0, k_new_player_games=5, k_new_player_multiplier=2.0,
        zero_sum=True, rating_floor=900, margin_scale=-0.2, margin_min=0.5,
    ),
}  # fmt: skip


def _random_history(n: int, n_players: int, seed: int) -> list[Match]:
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, n_players, size=(n, 2))
    winners = rng.choice(["a", "b", "draw"], size=n, p=[0.45, 0.45, 0.1])
    counts = rng.poisson(0.7, size=(n, 8))
    matches = []
    for i in range(n):
        a, b = int(pairs[i, 0]), int(pairs[i, 1])
        if a == b:
            b = (b + 1) % n_players
        c = counts[i].tolist()
        matches.append(
            Match.single(
                f"p{a}", f"p{b}", str(winners[i]), PlayerStats(*c[:4]), PlayerStats(*c[4:]), match_id=f"m{i}"
            )  # type: ignore[arg-type]
        )
    return matches


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_variant_agrees_on_a_long_history(name: str) -> None:
    """Under each rule variant the kernel reproduces 3,000 matches of a rate loop exactly."""
    matches = _random_history(3000, 60, seed=len(name))
    assert _kernel_rows(matches, VARIANTS[name], {}) == _oracle(matches, VARIANTS[name], {})


def test_chunked_run_equals_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replaying in chunks (as with a progress bar) gives the same ratings and records as one pass."""
    import sedma_elo.batch.kernel as kernel_module

    matches = _random_history(500, 30, seed=3)
    rules = VARIANTS["all"]
    whole = replay(matches, rules, record=True, method="kernel")
    monkeypatch.setattr(kernel_module, "CHUNK", 7)
    calls: list[int] = []
    chunked = replay(
        matches, rules, record=True, method="kernel", progress=lambda done, _: calls.append(done)
    )
    assert calls[0] == 7 and calls[-1] == 500
    assert chunked.ratings == whole.ratings
    assert whole.record is not None and chunked.record is not None
    assert np.array_equal(chunked.record.after, whole.record.after)
    assert np.array_equal(chunked.record.expected, whole.record.expected)
