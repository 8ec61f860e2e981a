"""Card codes, points and the seeded deal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.game.cards import (
    POINT_CARDS,
    SplitMix64,
    card_points,
    cards_of,
    deal_deck,
    format_card,
    matches,
    parse_card,
)


def test_every_card_round_trips_through_its_code() -> None:
    """format_card and parse_card are inverse on all 32 cards, and the codes are distinct."""
    codes = [format_card(c) for c in range(32)]
    assert len(set(codes)) == 32
    assert [parse_card(code) for code in codes] == list(range(32))


def test_ten_may_be_written_10_and_lower_case() -> None:
    """'10h', 'th' and 'Th' are the same card."""
    assert parse_card("10h") == parse_card("th") == parse_card("Th")


@pytest.mark.parametrize("bad", ["", "1h", "Ax", "Ahh", "11c", 7, None])
def test_unknown_cards_are_refused(bad: object) -> None:
    """Anything but rank+suit is a ValueError."""
    with pytest.raises(ValueError):
        parse_card(bad)


def test_aces_and_tens_are_the_eight_point_cards() -> None:
    """Exactly the four aces and four tens score one point each."""
    pointed = sorted(format_card(c) for c in range(32) if card_points(c))
    assert pointed == sorted(r + s for r in "TA" for s in "cdhs")
    assert bin(POINT_CARDS).count("1") == 8


def test_sevens_match_every_led_rank_and_other_ranks_only_their_own() -> None:
    """A seven takes over any trick; a king only a king-led one."""
    assert all(matches(parse_card("7d"), led) for led in range(8))
    assert matches(parse_card("Kd"), parse_card("Kc") >> 2)
    assert not matches(parse_card("Kd"), parse_card("Qc") >> 2)
    assert not matches(parse_card("Kd"), 0)


def test_splitmix64_matches_the_published_reference_output() -> None:
    """SplitMix64 seeded with 0 starts 0xE220A8397B1DCDAF (the reference implementation's first value)."""
    assert SplitMix64(0).next() == 0xE220A8397B1DCDAF


@given(st.integers(0, 2**64 - 1), st.integers(0, 50))
def test_seeded_deal_is_a_deterministic_permutation(seed: int, round_index: int) -> None:
    """The same seed and round always give the same order of all 32 cards."""
    deck = deal_deck(seed, round_index)
    assert sorted(deck) == list(range(32))
    assert deal_deck(seed, round_index) == deck


def test_rounds_of_one_seed_are_dealt_differently() -> None:
    """Consecutive rounds of a match get different deals."""
    assert deal_deck(7, 0) != deal_deck(7, 1)


def test_cards_of_lists_a_mask_lowest_first() -> None:
    """cards_of enumerates the set bits in increasing order."""
    assert list(cards_of(0b1010_0001)) == [0, 5, 7]
