"""Statistics and bad moves from a record, checked on the shipped example worked through by hand.

The example (``src/sedma_elo/game/examples/example_match.json``, target 4 match points) as checked by
reading its tricks (docs/game.md lists them):

* round 1: alice (seat 0) takes all 14 tricks: a 24er (3 match points);
* round 2: 4:4, bob takes the last trick (Qc over As): bob wins "4 and last" (1 match point);
* round 3: alice 6:2, a plain win (1 match point): alice reaches 4 and wins the match.

Exact bad moves (stock empty): a move is bad when it lowers what the round is worth to the mover.
Round 3 move 29 (alice holds 8h Kc Ks As, bob 7d Th Ts Jc, points 4:1 for alice, alice leads 8h):
bob's Ts leaves him 3 points + the last trick, a lost round; 7d takes the 8h and then every
remaining trick (alice holds no ten, jack or seven): 4 points + the last trick, 4:4 with the last
trick, a won round. Round 3 move 31 (Th where Jc keeps a point) lost a point but not the round: it
is no longer bad. Round 2 move 27 (alice continues with 7c where stopping wins the round) is checked
against a plain minimax below.
"""

from __future__ import annotations

from pathlib import Path

from sedma_elo.core.model import PlayerStats
from sedma_elo.game.analysis import AnalysisConfig, analyze
from sedma_elo.game.cards import parse_card
from sedma_elo.game.record import iter_positions, load_record
from sedma_elo.game.state import RoundState
from sedma_elo.game.value import reference_values

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


def test_example_exact_bad_moves_are_the_ones_that_lose_the_round() -> None:
    """The exact judge finds alice r2 m27 (7c, better stop) and bob r3 m29 (Ts, better 7d), nothing else."""
    result = analyze(load_record(EXAMPLE), _exact())
    found = [(b.player, b.round, b.move, b.played, b.better, b.value_lost) for b in result.bad_moves()]
    assert found == [("alice", 2, 27, "7c", ("stop",), 2.0), ("bob", 3, 29, "Ts", ("7d",), 2.0)]


def test_a_point_lost_without_changing_the_round_is_not_bad() -> None:
    """Round 3 move 31 (Th instead of Jc) costs bob a point, but the round is lost either way."""
    state = _state_at(3, 31)
    values = reference_values(state, (1, 2, 3))
    assert values[parse_card("Th")] == values[parse_card("Jc")] == -1
    assert (3, 31) not in {(b.round, b.move) for b in analyze(load_record(EXAMPLE), _exact()).bad_moves()}


def test_round2_move27_continuing_loses_the_round_by_plain_minimax() -> None:
    """Continuing with 7c loses alice the round; stopping wins it (exhaustive search over the real deal)."""
    from sedma_elo.game.state import STOP

    values = reference_values(_state_at(2, 27), (1, 2, 3))
    assert values[parse_card("7c")] == -1 and values[STOP] == 1


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
            "b": {"bad_moves": 1, "won_by_16": 0, "won_by_24": 0, "won_by_4_and_last": 1},
        },
    }


def test_to_match_feeds_the_rating_model() -> None:
    """The analysis converts to a rating Match with the same counts."""
    match = analyze(load_record(EXAMPLE), _exact()).to_match()
    assert match.team_a == ("alice",) and match.winner == "a"
    assert match.stats_of("bob") == PlayerStats(bad_moves=1, won_by_4_and_last=1)


def test_a_24er_counts_as_16er_only_when_the_rules_say_so() -> None:
    """With count_24_as_16 the same record gives alice one 16er too."""
    import dataclasses

    record = load_record(EXAMPLE)
    record = dataclasses.replace(record, rules=dataclasses.replace(record.rules, count_24_as_16=True))
    alice = analyze(record, AnalysisConfig(judge="none")).players[0]
    assert (alice.won_by_16, alice.won_by_24) == (1, 1)


def test_with_equal_stakes_only_losing_the_round_is_bad() -> None:
    """First-to-N rounds (all stakes 1): the example's two bad moves lose the round, so both stay."""
    import dataclasses

    record = load_record(EXAMPLE)
    rules = dataclasses.replace(record.rules, stake_16=1, stake_24=1, target=2)
    result = analyze(dataclasses.replace(record, rules=rules), _exact())
    found = [(b.round, b.move) for b in result.bad_moves()]
    assert found == [(2, 27), (3, 29)]


def test_sampled_analysis_is_deterministic_for_a_seed() -> None:
    """The full analysis (with sampling) gives the same bad moves twice for the same seed."""
    config = AnalysisConfig(seed=3)
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
