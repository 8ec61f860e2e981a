"""Verdicts: the exact rule on hand-checked positions, the sequential test's bounds, determinism."""

from __future__ import annotations

import dataclasses
from math import comb
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.game.analysis import AnalysisConfig, analyze, cost_words, record_seed
from sedma_elo.game.cards import parse_card
from sedma_elo.game.judge import _bounds, judge_exact, judge_sampled, looks
from sedma_elo.game.record import iter_positions, load_record
from sedma_elo.game.solver import Solver
from sedma_elo.game.state import STOP
from sedma_elo.game.value import ValueSolver

from .helpers import scored_endgame

EXAMPLE = Path(__file__).parents[2] / "src" / "sedma_elo" / "game" / "examples" / "example_match.json"
VALUES = ValueSolver(table_bits=14)


def _tail(n: int, p: float, k: int) -> float:
    return sum(comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


@given(n=st.integers(1, 200), share=st.sampled_from([0.3, 0.5, 0.7]), alpha=st.sampled_from([0.01, 0.05]))
def test_bad_bound_is_the_least_count_the_binomial_test_rejects(n: int, share: float, alpha: float) -> None:
    """k_bad is the least k with P[Bin(n, share) >= k] <= alpha (n + 1 when none is)."""
    k_bad, _ = _bounds(n, share, alpha)
    assert k_bad == n + 1 or _tail(n, share, k_bad) <= alpha
    assert k_bad == 0 or _tail(n, share, k_bad - 1) > alpha


def test_looks_double_up_to_the_cap() -> None:
    """The test looks at 8, 16, 32, 64 deals (and at the cap when it is not a doubling)."""
    assert looks(8, 64) == [8, 16, 32, 64] and looks(8, 50) == [8, 16, 32, 50] and looks(5, 5) == [5]


def test_exact_verdict_names_the_winning_alternatives() -> None:
    """The 4:4 seven lead is bad: the jack and the queen win the round, 2 match points of swing."""
    state = scored_endgame([["Jh", "Qs", "7c"], ["8s", "8d", "Qd"]], ["Ac", "Ad", "Tc", "Td"])
    v = judge_exact(state, parse_card("7c"), (1, 2, 3), VALUES, Solver())
    assert v.bad and v.better == (4, 5) and (v.value_played, v.value_better) == (-1.0, 1.0)
    assert not judge_exact(state, parse_card("Jh"), (1, 2, 3), VALUES, Solver()).bad


def test_the_stop_that_lets_the_last_trick_go_is_bad() -> None:
    """Seat 1 stops where continuing with Qd takes the last trick and the round."""
    state = scored_endgame([["7h", "8s"], ["Qc", "Qd"]], ["Ac", "Ad", "Tc", "Td"], leader=1)
    state.play(parse_card("Qc"))
    state.play(parse_card("7h"))
    v = judge_exact(state, STOP, (1, 2, 3), VALUES, Solver())
    assert v.bad and v.better == (5,)


def test_sampled_verdict_is_a_function_of_the_seed() -> None:
    """The same position, move and seed give the same verdict; the deals solved follow the looks."""
    record = load_record(EXAMPLE)
    positions = [(st.copy(), mv.move) for _r, _i, st, mv in iter_positions(record) if 0 < st.stock_size <= 6]
    for state, move in positions[:6]:
        args = (state, move, (1, 2, 3), VALUES, 99)
        kw = {"share": 0.5, "confidence": 0.95, "min_deals": 8, "max_deals": 64}
        a, b = judge_sampled(*args, **kw), judge_sampled(*args, **kw)  # type: ignore[arg-type]
        assert a == b and a.deals in (8, 16, 32, 64)


def test_a_sampled_verdict_that_is_not_clearly_good_is_redone_over_all_deals() -> None:
    """Sampled "bad" or "open" verdicts become the all-deals verdict; only clear "not bad" stays sampled."""
    record = load_record(EXAMPLE)
    positions = [(st.copy(), mv.move) for _r, _i, st, mv in iter_positions(record) if 0 < st.stock_size <= 2]
    kw = {"share": 0.5, "confidence": 0.95, "min_deals": 8, "max_deals": 32}
    redone = 0
    for state, _played in positions:
        for move in state.legal_moves():
            args = (state, move, (1, 2, 3), VALUES, 7)
            v = judge_sampled(*args, **kw, max_listed_close=4096)  # type: ignore[arg-type]
            if v.method == "sampled":
                assert not v.bad and judge_sampled(*args, **kw) == v  # type: ignore[arg-type]
            else:
                redone += 1
                assert v == judge_sampled(*args, **kw, max_listed=4096)  # type: ignore[arg-type]
    assert redone > 0


def test_the_seed_comes_from_the_record() -> None:
    """Equal records give equal seeds; another player id (or config seed) gives another."""
    record = load_record(EXAMPLE)
    assert record_seed(record) == record_seed(load_record(EXAMPLE))
    assert record_seed(record) != record_seed(dataclasses.replace(record, players=("alice", "carol")))
    assert record_seed(record) != record_seed(record, 1)


def test_full_analysis_is_the_same_on_every_run() -> None:
    """Two analyses of the example with fresh solvers agree in every bad move."""
    a = analyze(load_record(EXAMPLE), AnalysisConfig())
    b = analyze(load_record(EXAMPLE), AnalysisConfig(), Solver(), values=ValueSolver(table_bits=12))
    assert a.bad_moves() == b.bad_moves() and a.judged_moves == b.judged_moves > 0


def test_details_serialise_to_json_with_one_based_numbers() -> None:
    """to_dict is JSON-ready; bad moves carry round, move, player id, played, better and cost."""
    import json

    data = analyze(load_record(EXAMPLE), AnalysisConfig(judge="exact")).to_dict()
    again = json.loads(json.dumps(data))
    first = again["bad_moves"][0]
    assert (first["round"], first["move"], first["player"], first["played"]) == (2, 27, "alice", "7c")
    assert first["better"] == ["stop"] and "won round into a lost one" in first["cost"]
    assert [r["kind"] for r in again["rounds"]] == ["24", "4_and_last", "plain"]


def test_each_cost_has_a_structured_detail_matching_its_words() -> None:
    """The example's exact bad moves: alice's 7c loses a plain win at 4:1, bob's Ts at 1:4 likewise."""
    data = analyze(load_record(EXAMPLE), AnalysisConfig(judge="exact")).to_dict()
    details = [(b["round"], b["move"], b["cost_detail"]) for b in data["bad_moves"]]  # type: ignore[union-attr]
    assert details == [
        (2, 27, {"kind": "lost_round", "score": "4:1"}),
        (3, 29, {"kind": "lost_round", "score": "1:4"}),  # bob has 1 point, alice 4
    ]
    assert all(cost_words(b["cost_detail"]) == b["cost"] for b in data["bad_moves"])  # type: ignore[union-attr]


def test_cost_words_name_the_outcomes_unless_a_plain_win_is_lost() -> None:
    """A 16er conceded where a plain loss was possible names both outcomes; a sampled cost its numbers."""
    conceded = {"kind": "conceded_16", "score": "3:2", "got": "lost_16", "best": "lost"}
    assert cost_words(conceded) == "conceded a 16er at 3:2 (lost (16er against) instead of lost)"
    sampled = {
        "kind": "lost_value",
        "score": "1:0",
        "share": 81,
        "deals": 64,
        "all_deals": False,
        "value": 1.5,
    }
    assert cost_words(sampled) == (
        "lost value in 81% of 64 deals of the unseen cards at 1:0: 1.50 match points on average"
    )


def test_bounds_hold_for_thousands_of_deals() -> None:
    """Past a thousand deals the binomial test still works (no float overflow) and stays ordered."""
    k_bad, k_good = _bounds(4096, 0.5, 0.001)
    assert 2048 < k_bad <= 4096 and 0 <= k_good < 2048
