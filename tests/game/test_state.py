"""The rules engine, trick by trick, with positions worked out by hand."""

from __future__ import annotations

import pytest

from sedma_elo.game.bots import GreedyBot, RandomBot
from sedma_elo.game.cards import ALL_CARDS, mask_of, parse_card
from sedma_elo.game.config import GameRules
from sedma_elo.game.state import STOP, RoundState, next_first_leader, round_stake

from .helpers import endgame_state, play, state_for

HANDS = [["Kc", "Ks", "9c", "Ah"], ["Kd", "9h", "7h", "Tc"]]
STOCK = ("8c", "8d", "8h", "8s")


def cards(*codes: str) -> int:
    return mask_of(parse_card(c) for c in codes)


def test_deal_gives_each_seat_four_cards_and_leaves_24_in_the_stock() -> None:
    """Two players: 4 + 4 dealt, 24 in the stock, the first leader to move."""
    st = state_for(HANDS, STOCK, first=1)
    assert st.hands == [cards(*HANDS[0]), cards(*HANDS[1])]
    assert st.stock_size == 24 and st.to_move == 1 and st.leader == 1


def test_unmatched_answer_leaves_the_trick_to_the_leader() -> None:
    """9c led, Kd answered: no match, the leader takes and draws first."""
    st = play(state_for(HANDS, STOCK), "9c", "Kd")
    assert st.won[0] == cards("9c", "Kd") and st.tricks == [1, 0]
    assert st.hands[0] == cards("Kc", "Ks", "Ah", "8c")
    assert st.hands[1] == cards("9h", "7h", "Tc", "8d")
    assert st.to_move == 0 and st.leader == 0 and st.led == -1


def test_matching_answer_lets_the_leader_decide() -> None:
    """Kc led, Kd answered: the leader holds Ks and may continue with it or stop."""
    st = play(state_for(HANDS, STOCK), "Kc", "Kd")
    assert st.deciding and st.to_move == 0
    assert st.legal_moves() == [parse_card("Ks"), STOP]


def test_stop_gives_the_trick_to_the_answer_and_its_taker_draws_first() -> None:
    """After Kc Kd, stopping gives both cards to seat 1, who draws 8c and leads."""
    st = play(state_for(HANDS, STOCK), "Kc", "Kd", "stop")
    assert st.won[1] == cards("Kc", "Kd") and st.tricks == [0, 1]
    assert st.hands[1] & cards("8c") and st.hands[0] & cards("8d")
    assert st.to_move == 1 and st.leader == 1


def test_continuation_makes_everybody_play_again_and_refills_all_cards() -> None:
    """Kc Kd Ks 9h: the continuation wins; four cards taken, two drawn each, the winner first."""
    st = play(state_for(HANDS, STOCK), "Kc", "Kd", "Ks", "9h")
    assert st.won[0] == cards("Kc", "Kd", "Ks", "9h") and st.tricks == [1, 0]
    assert st.hands[0] == cards("9c", "Ah", "8c", "8h")
    assert st.hands[1] == cards("7h", "Tc", "8d", "8s")


def test_a_seven_takes_any_trick() -> None:
    """Kc answered by 7h: the seven wins unless the leader continues; Ks continues, Tc loses to it."""
    st = play(state_for(HANDS, STOCK), "Kc", "7h")
    assert st.deciding
    play(st, "Ks", "Tc")
    assert st.won[0] == cards("Kc", "7h", "Ks", "Tc")


def test_a_led_seven_is_only_a_seven() -> None:
    """7h led by seat 1 is not taken by a king; a seven would."""
    st = play(state_for(HANDS, STOCK, first=1), "7h", "Kc")
    assert st.won[1] == cards("7h", "Kc")


def test_a_leader_without_a_matching_card_cannot_continue() -> None:
    """Kc Kd with no other king or seven in the leader's hand: seat 1 takes at once."""
    st = play(state_for([["Kc", "9c", "Qs", "Ah"], HANDS[1]], STOCK), "Kc", "Kd")
    assert not st.deciding and st.won[1] == cards("Kc", "Kd") and st.to_move == 1


def test_continuation_only_with_the_led_rank_or_a_seven() -> None:
    """While deciding, 9c (neither a king nor a seven) is refused with the reason."""
    st = play(state_for(HANDS, STOCK), "Kc", "Kd")
    reason = st.check(parse_card("9c"))
    assert reason is not None and "continued" in reason


def test_stop_is_refused_when_no_decision_is_pending() -> None:
    """'stop' at a lead is illegal."""
    reason = state_for(HANDS, STOCK).check(STOP)
    assert reason is not None and "stop" in reason


def test_cards_not_held_and_cards_already_played_are_named() -> None:
    """The reason tells a card in another hand from one already played."""
    st = play(state_for(HANDS, STOCK), "9c", "Kd")
    assert st.check(parse_card("Tc")) == "player 0 does not hold Tc"
    assert st.check(parse_card("Kd")) == "card Kd was already played"


def test_four_players_partner_taking_ends_the_trick() -> None:
    """Seats 0 and 2 are partners: Kc 8c Kd 9c ends with seat 2 taking for side 0."""
    hands = [
        ["Kc", "Ks", "Ah", "Jc"],
        ["8c", "8d", "Jd", "Qc"],
        ["Kd", "Th", "Jh", "Qd"],
        ["9c", "9d", "Js", "Qh"],
    ]
    st = play(state_for(hands), "Kc", "8c", "Kd", "9c")
    assert st.won[0] == cards("Kc", "8c", "Kd", "9c") and st.to_move == 2 and st.leader == 2


def test_four_players_opponent_taking_lets_the_leader_decide() -> None:
    """Kc 8c 9h... seat 3 answers Kh: the leader (seat 0, holding Ks) decides; after Ks all play again."""
    hands = [
        ["Kc", "Ks", "Ah", "Jc"],
        ["8c", "8d", "Jd", "Qc"],
        ["9h", "Th", "Jh", "Qd"],
        ["Kh", "9d", "Js", "Qh"],
    ]
    st = play(state_for(hands), "Kc", "8c", "9h", "Kh")
    assert st.deciding and st.to_move == 0
    play(st, "Ks", "8d", "Th", "9d")
    assert st.won[0] == cards("Kc", "8c", "9h", "Kh", "Ks", "8d", "Th", "9d")
    assert [bin(h).count("1") for h in st.hands] == [4, 4, 4, 4]


def test_last_trick_with_empty_hands_ends_the_round() -> None:
    """One card each, Kc Kd: the leader has nothing to continue with; seat 1 takes the last trick."""
    st = play(endgame_state([["Kc"], ["Kd"]]), "Kc", "Kd")
    assert st.done and st.last_winner == 1


def _finished(won0: list[str], tricks: tuple[int, int], last: int) -> RoundState:
    st = endgame_state([[], []])
    st.won = [cards(*won0), ALL_CARDS & ~cards(*won0)]
    st.tricks = list(tricks)
    st.last_winner = last
    st.done = True
    return st


def test_more_points_win_the_round() -> None:
    """5:3 wins for side 0 even without the last trick; a plain win."""
    res = _finished(["Ac", "Ad", "Ah", "Tc", "Td"], (5, 5), last=1).result()
    assert res.points == (5, 3) and res.winner == 0 and res.kind == "plain"


def test_four_all_is_decided_by_the_last_trick() -> None:
    """4:4 and side 1 took the last trick: side 1 wins '4 and last'."""
    res = _finished(["Ac", "Ad", "Ah", "As"], (6, 6), last=1).result()
    assert res.winner == 1 and res.kind == "4_and_last"


def test_all_points_is_a_16er_and_all_tricks_a_24er() -> None:
    """8 points with a trick lost: 16er; every trick: 24er, a 16er too only when the rules say so."""
    all_points = ["Ac", "Ad", "Ah", "As", "Tc", "Td", "Th", "Ts"]
    assert _finished(all_points, (7, 1), last=0).result().kind == "16"
    st = _finished(all_points, (8, 0), last=0)
    st.won = [ALL_CARDS, 0]
    res = st.result()
    assert res.kind == "24"
    assert not res.counts_as_16(GameRules()) and res.counts_as_16(GameRules(count_24_as_16=True))


def test_round_stakes_follow_the_rules() -> None:
    """A plain win, a 16er and a 24er earn stake_win, stake_16 and stake_24 match points."""
    rules = GameRules(stake_win=1, stake_16=4, stake_24=9)
    kinds = {}
    for won, tricks in (
        (["Ac", "Ad", "Ah", "Tc", "Td"], (5, 3)),
        (["Ac", "Ad", "Ah", "As", "Tc", "Td", "Th", "Ts"], (7, 1)),
    ):
        res = _finished(won, tricks, last=0).result()
        kinds[res.kind] = round_stake(rules, res)
    st = _finished([], (8, 0), 0)
    st.won = [ALL_CARDS, 0]
    kinds["24"] = round_stake(rules, st.result())
    assert kinds == {"plain": 1, "16": 4, "24": 9}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("alternate", [0, 1, 0, 1]), ("winner", [0, 1, 1, 1]), ("loser", [0, 0, 0, 0])],
)
def test_first_leader_of_each_round(mode: str, expected: list[int]) -> None:
    """Two players, side 1 wins every round: who leads each round's first trick."""
    rules = GameRules(first_leader=mode)  # type: ignore[arg-type]
    first, got = 0, []
    for r in range(4):
        first = next_first_leader(rules, r, first, prev_winner=1)
        got.append(first)
    assert got == expected


@pytest.mark.parametrize("players", [2, 4])
def test_random_play_always_finishes_with_eight_points(players: int) -> None:
    """Any legal play ends with empty hands, an empty stock and 8 points split between the sides."""
    from sedma_elo.game.cards import deal_deck

    bot = RandomBot(5)
    for seed in range(200):
        st = RoundState(deal_deck(seed, 0), players, seed % players)
        while not st.done:
            st.play(bot.choose(st))
        res = st.result()
        assert sum(res.points) == 8 and st.stock_size == 0 and not any(st.hands)
        assert st.won[0] | st.won[1] == ALL_CARDS


def test_greedy_bot_moves_are_always_legal() -> None:
    """The greedy rule never proposes an illegal move."""
    from sedma_elo.game.cards import deal_deck

    bot = GreedyBot()
    for seed in range(200):
        st = RoundState(deal_deck(seed, 3), 2, 0)
        while not st.done:
            move = bot.choose(st)
            assert st.check(move) is None
            st.play(move)
