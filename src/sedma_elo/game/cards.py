"""The 32-card pack: card codes, points, sets of cards as bitmasks, and the seeded deal.

A card is an int ``0..31``: ``rank * 4 + suit``. Ranks, low to high: ``7 8 9 T J Q K A`` (rank index
``0..7``; ``T`` is the ten and ``10`` is accepted on input); suits ``c d h s``. Text form: rank then
suit, e.g. ``"Ah"``, ``"Tc"``, ``"7s"``. Only the rank matters in play (there is no suit to follow and
the sevens are the trumps); suits only tell the four cards of a rank apart.

A set of cards is an int bitmask (bit ``card`` set when the card is in the set).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = [
    "ALL_CARDS",
    "N_CARDS",
    "POINT_CARDS",
    "RANKS",
    "SEVENS",
    "SUITS",
    "card_points",
    "card_rank",
    "cards_of",
    "deal_deck",
    "format_card",
    "mask_of",
    "matches",
    "parse_card",
    "rank_mask",
]

RANKS = "789TJQKA"
SUITS = "cdhs"
N_CARDS = 32
ALL_CARDS = (1 << N_CARDS) - 1
SEVEN_RANK = 0
TEN_RANK = 3
ACE_RANK = 7
#: The four sevens (rank 0): always trumps.
SEVENS = 0xF
#: Aces and tens: one point each, eight in the pack.
POINT_CARDS = (0xF << (4 * TEN_RANK)) | (0xF << (4 * ACE_RANK))

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def rank_mask(rank: int) -> int:
    """The bitmask of the four cards of ``rank`` (0 = seven ... 7 = ace)."""
    return 0xF << (4 * rank)


def card_rank(card: int) -> int:
    """The rank index ``0..7`` of ``card``."""
    return card >> 2


def card_points(card: int) -> int:
    """1 for an ace or a ten, else 0."""
    return (POINT_CARDS >> card) & 1


def matches(card: int, led_rank: int) -> bool:
    """Whether ``card`` takes over a trick led with ``led_rank``: same rank, or a seven."""
    rank = card >> 2
    return rank in (led_rank, SEVEN_RANK)


def format_card(card: int) -> str:
    """Text form of ``card``, e.g. ``"Ah"``."""
    return RANKS[card >> 2] + SUITS[card & 3]


def parse_card(text: object) -> int:
    """Parse a card code (``"Ah"``, ``"Tc"``, ``"10c"``; case-insensitive). Raises ``ValueError``."""
    if not isinstance(text, str):
        raise ValueError(f"a card must be a string like 'Ah', got {type(text).__name__}")
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1].lower() not in SUITS:
        raise ValueError(f"unknown card {text!r} (rank one of 7 8 9 T J Q K A, suit one of c d h s)")
    return RANKS.index(t[0]) * 4 + SUITS.index(t[1].lower())


def mask_of(cards: Iterable[int]) -> int:
    """The bitmask of ``cards``."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> Iterator[int]:
    """The cards of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class SplitMix64:
    """The SplitMix64 generator (Steele, Lea, Flood 2014): tiny, portable, fully specified."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def next(self) -> int:
        """The next 64-bit output."""
        self.state = (self.state + _GOLDEN) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)


def deal_deck(seed: int, round_index: int) -> list[int]:
    """The deck order of round ``round_index`` (0-based) of a match dealt from ``seed``.

    Specified so any game server can reproduce it: start from the cards in index order ``0..31``;
    seed SplitMix64 with ``(seed + round_index * 0x9E3779B97F4A7C15) mod 2**64``; then Fisher-Yates,
    for ``i`` from 31 down to 1 swap positions ``i`` and ``next() mod (i + 1)``.
    """
    rng = SplitMix64((seed + round_index * _GOLDEN) & _MASK64)
    deck = list(range(N_CARDS))
    for i in range(N_CARDS - 1, 0, -1):
        j = rng.next() % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck
