"""Provisional ratings: a player with few matches has a rating that says little yet.

One pure rule shared by the service's JSON (``"provisional": true``) and the pages ("1034?", left
off the leaderboard by default). The threshold is a setting of the service
(``SEDMA_ELO_PROVISIONAL_MATCHES``); this module holds its default.
"""

from __future__ import annotations

__all__ = ["PROVISIONAL_MATCHES", "is_provisional"]

#: Below this many rated matches a rating is provisional.
PROVISIONAL_MATCHES = 10


def is_provisional(matches_played: int, threshold: int = PROVISIONAL_MATCHES) -> bool:
    """True when ``matches_played`` (>= 0) is below ``threshold`` (0 turns the mark off)."""
    return matches_played < threshold
