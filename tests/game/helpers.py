"""Builders shared by the game tests: decks that deal chosen hands, and simple reference searches."""

from __future__ import annotations

from sedma_elo.game.cards import N_CARDS, parse_card
from sedma_elo.game.state import RoundState


def deck_for(hands: list[list[str]], stock: tuple[str, ...] = (), first: int = 0) -> list[int]:
    """A deck that deals ``hands[s]`` to seat ``s`` (dealt one at a time from ``first``), then ``stock``.

    Cards not named are appended after ``stock`` in index order.
    """
    n = len(hands)
    deck: list[int] = []
    for k in range(4):
        for i in range(n):
            deck.append(parse_card(hands[(first + i) % n][k]))
    deck += [parse_card(c) for c in stock]
    deck += [c for c in range(N_CARDS) if c not in deck]
    assert sorted(deck) == list(range(N_CARDS))
    return deck


def state_for(hands: list[list[str]], stock: tuple[str, ...] = (), first: int = 0) -> RoundState:
    """A fresh round dealt with :func:`deck_for`."""
    return RoundState(deck_for(hands, stock, first), len(hands), first)


def play(state: RoundState, *moves: str) -> RoundState:
    """Play ``moves`` (card codes or ``stop``) on ``state``, checking each is legal; returns ``state``."""
    from sedma_elo.game.state import STOP

    for text in moves:
        move = STOP if text == "stop" else parse_card(text)
        reason = state.check(move)
        assert reason is None, f"{text}: {reason}"
        state.play(move)
    return state


def plain_minimax(state: RoundState) -> int:
    """Half-points side 0 takes from the cards not yet won: exhaustive, no pruning, no table, card by card."""
    if state.done:
        return 0
    base = 2 * state.points(0)
    values = []
    for move in state.legal_moves():
        child = state.copy()
        child.play(move)
        gained = 2 * child.points(0) - base
        if child.done:
            gained += 1 if child.last_winner % 2 == 0 else 0
        values.append(gained + plain_minimax(child))
    return max(values) if state.to_move % 2 == 0 else min(values)


def endgame_state(hands: list[list[str]], leader: int = 0) -> RoundState:
    """A two-player round with an empty stock, the given hands, ``leader`` to lead, and every other
    card already taken by side 1 (so side 0 has 0 points so far)."""
    return scored_endgame(hands, [], leader, tricks=(0, 1))


def scored_endgame(
    hands: list[list[str]], won_0: list[str], leader: int = 0, tricks: tuple[int, int] = (1, 1)
) -> RoundState:
    """A round with an empty stock and the given hands, ``leader`` to lead: side 0 has taken the cards
    ``won_0``, side 1 every other card not in a hand; ``tricks`` are the tricks each side took."""
    from sedma_elo.game.cards import ALL_CARDS, mask_of

    state = RoundState(list(range(N_CARDS)), len(hands), 0)
    state.hands = [mask_of(parse_card(c) for c in h) for h in hands]
    state.pos = N_CARDS
    state.leader = state.to_move = state.winner = leader
    in_hands = 0
    for h in state.hands:
        in_hands |= h
    won0 = mask_of(parse_card(c) for c in won_0)
    state.won = [won0, ALL_CARDS & ~in_hands & ~won0]
    state.tricks = list(tricks)
    return state
