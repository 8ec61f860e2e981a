"""Statistics and bad moves from a record, checked on the shipped example worked through by hand.

The example (``src/sedma_elo/game/examples/example_match.json``, target 4 match points) as checked by
reading its tricks (docs/game.md lists them):

* round 1: alice (seat 0) takes all 14 tricks: a 24er (3 match points);
* round 2: 4:4, bob takes the last trick (Qc over As): bob wins "4 and last" (1 match point);
* round 3: alice 6:2, a plain win (1 match point): alice reaches 4 and wins the match.

Exact bad moves (stock empty), two of them worked out by hand in round 3 (alice holds 8h Kc Ks As,
bob 7d Th Ts Jc, points 4:1, alice leads 8h):

* move 29, bob plays Ts: 7d takes 8h and then bob wins every remaining trick (alice holds no ten, jack
  or seven): 4 points + last trick = 4.5, against 3.5 after Ts: 1 point lost.
* move 31, bob answers alice's Kc (alice then holds Ks As) from 7d Th Jc: Jc keeps Th and 7d for
  later (bob ends with 3 + last = 3.5); Th gives the ten away at once (2 + last = 2.5): 1 point lost.
* move 25 of round 2 (alice leads Tc instead of Ac) is checked against a plain minimax below.
"""

from __future__ import annotations

from pathlib import Path

from sedma_elo.core.model import PlayerStats
from sedma_elo.game.analysis import AnalysisConfig, analyze
from sedma_elo.game.cards import parse_card
from sedma_elo.game.record import iter_positions, load_record
from sedma_elo.game.state import RoundState

from .helpers import plain_minimax

EXAMPLE = Path(__file__).parents[2] / "src" / "sedma_elo" / "game" / "examples" / "example_match.json"


def _exact() -> AnalysisConfig:
    return AnalysisConfig(judge="exact")


def test_example_round_statistics_match_the_hand_count() -> None:
    """alice: 2 rounds won, one a 24er; bob: 1 round, won 4 and last; alice wins the match 4:1."""
    result = analyze(load_record(EXAMPLE), _exact())
    alice, bob = result.players
    assert (alice.rounds_won, alice.won_by_16, alice.won_by_24, alice.won_by_4_and_last) == (2, 0, 1, 0)
    assert (bob.rounds_won, bob.won_by_16, bob.won_by_24, bob.won_by_4_and_last) == (1, 0, 0, 1)
    assert result.replay.match_points == (4, 1) and result.winner == "a"


def test_example_exact_bad_moves_are_the_hand_checked_ones() -> None:
    """The exact judge finds alice r2 m25 (Tc, best Ac), bob r3 m29 (Ts, best 7d) and r3 m31 (Th, best Jc)."""
    result = analyze(load_record(EXAMPLE), _exact())
    found = sorted(
        (b.player, b.round, b.move, b.played, b.best, b.loss) for p in result.players for b in p.bad_moves
    )
    assert found == [
        ("alice", 2, 25, "Tc", "Ac", 1.0),
        ("bob", 3, 29, "Ts", "7d", 1.0),
        ("bob", 3, 31, "Th", "Jc", 1.0),
    ]


def _state_at(round_no: int, move_no: int) -> RoundState:
    record = load_record(EXAMPLE)
    for r, i, state, _mv in iter_positions(record):
        if (r + 1, i + 1) == (round_no, move_no):
            return state.copy()
    raise AssertionError("no such move")


def _minimax_value(state: RoundState, move: str) -> int:
    child = state.copy()
    child.play(parse_card(move))
    return 2 * child.points(0) + plain_minimax(child)


def test_round2_move25_loss_agrees_with_plain_minimax() -> None:
    """Leading Tc instead of Ac costs alice (side 0) exactly 2 half-points by exhaustive search."""
    state = _state_at(2, 25)
    assert _minimax_value(state, "Ac") - _minimax_value(state, "Tc") == 2


def test_json_output_is_the_service_match_body() -> None:
    """to_json has exactly the service's fields and the four stat counts per side."""
    body = analyze(load_record(EXAMPLE), _exact()).to_json()
    assert body == {
        "match_id": "example-1",
        "played_at": "2026-11-29T12:00:00+00:00",
        "player_a": "alice",
        "player_b": "bob",
        "winner": "a",
        "stats": {
            "a": {"bad_moves": 1, "won_by_16": 0, "won_by_24": 1, "won_by_4_and_last": 0},
            "b": {"bad_moves": 2, "won_by_16": 0, "won_by_24": 0, "won_by_4_and_last": 1},
        },
    }


def test_to_match_feeds_the_rating_model() -> None:
    """The analysis converts to a rating Match with the same counts."""
    match = analyze(load_record(EXAMPLE), _exact()).to_match()
    assert match.team_a == ("alice",) and match.winner == "a"
    assert match.stats_of("bob") == PlayerStats(bad_moves=2, won_by_4_and_last=1)


def test_a_24er_counts_as_16er_only_when_the_rules_say_so() -> None:
    """With count_24_as_16 the same record gives alice one 16er too."""
    import dataclasses

    record = load_record(EXAMPLE)
    record = dataclasses.replace(record, rules=dataclasses.replace(record.rules, count_24_as_16=True))
    alice = analyze(record, AnalysisConfig(judge="none")).players[0]
    assert (alice.won_by_16, alice.won_by_24) == (1, 1)


def test_higher_exact_threshold_finds_fewer_bad_moves() -> None:
    """A 1.5-point threshold drops the 1-point mistakes."""
    result = analyze(load_record(EXAMPLE), AnalysisConfig(judge="exact", exact_threshold=1.5))
    assert sum(len(p.bad_moves) for p in result.players) == 0


def test_sampled_analysis_is_deterministic_for_a_seed() -> None:
    """The full analysis (with sampling) gives the same bad moves twice for the same seed."""
    config = AnalysisConfig(samples=8, seed=3)
    a = analyze(load_record(EXAMPLE), config)
    b = analyze(load_record(EXAMPLE), config)
    assert [p.bad_moves for p in a.players] == [p.bad_moves for p in b.players]
    assert a.judged_moves > 0


def test_example_rates_through_the_engine() -> None:
    """The derived Match goes straight into sedma_elo.rate: alice (winner) gains, her bad move is counted."""
    from sedma_elo import rate

    result = rate(analyze(load_record(EXAMPLE), _exact()).to_match(), {"alice": 1000, "bob": 1000})
    alice = next(c for c in result.changes if c.player_id == "alice")
    assert alice.rating_after > 1000 and alice.score.malus.count == 1
