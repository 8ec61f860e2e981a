"""A record trick by trick (the match page's view): every move once, in order, and each trick's taker."""

from __future__ import annotations

from pathlib import Path

from sedma_elo.game.bots import make_bot, play_match
from sedma_elo.game.cards import card_points, parse_card
from sedma_elo.game.config import GameRules
from sedma_elo.game.record import load_record, replay
from sedma_elo.game.state import format_move
from sedma_elo.game.tricks import round_tricks

EXAMPLE = Path(__file__).parents[2] / "src" / "sedma_elo" / "game" / "examples" / "example_match.json"


def test_every_move_appears_once_in_order() -> None:
    """Concatenating a round's tricks gives its moves, numbered 1, 2, ... as in the record."""
    record = load_record(EXAMPLE)
    for rnd, tricks in zip(record.rounds, round_tricks(record), strict=True):
        plays = [p for t in tricks for p in t.plays]
        assert [p.move for p in plays] == list(range(1, len(rnd.moves) + 1))
        assert [(p.seat, p.card) for p in plays] == [(m.player, format_move(m.move)) for m in rnd.moves]


def test_tricks_taken_and_points_agree_with_the_round_results() -> None:
    """Per side, tricks taken and the points in them equal the round's result; so does the last taker."""
    for record in (load_record(EXAMPLE), _four_player_record()):
        for result, tricks in zip(replay(record).results, round_tricks(record), strict=True):
            taken = [sum(1 for t in tricks if t.taker % 2 == side) for side in (0, 1)]
            points = [sum(t.points for t in tricks if t.taker % 2 == side) for side in (0, 1)]
            assert tuple(taken) == result.tricks
            assert tuple(points) == result.points
            assert tricks[-1].taker % 2 == result.last_trick_side


def test_a_trick_counts_only_aces_and_tens() -> None:
    """Each trick's points are the aces and tens among its cards ("stop" is no card)."""
    record = load_record(EXAMPLE)
    for tricks in round_tricks(record):
        for t in tricks:
            cards = [p.card for p in t.plays if p.card != "stop"]
            assert t.points == sum(1 for c in cards if c[0] in "AT")
            assert t.points == sum(card_points(parse_card(c)) for c in cards)


def _four_player_record():  # type: ignore[no-untyped-def]
    rules = GameRules(players=4)
    bots = [make_bot("greedy", i) for i in range(4)]
    return play_match(bots, ["a1", "b1", "a2", "b2"], 3, rules).record
