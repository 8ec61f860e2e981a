"""The words of the rules' reasons for K and of their notes on rule variants: one template each.

The engine writes a player's ``k_reason`` and ``notes`` (``PlayerChange``, the explanation JSON) in
English by filling in these templates; :func:`parse` reads such a text back into its template and
fields, which is how ``sedma_elo.core.sentences`` translates a stored explanation into another
language. Each template is a message of the gettext catalogs (``make messages``): changing its
English wording changes the JSON and every catalog, so do it here only.

Fields are plain ``str.format`` fields filled with text; the callers format the numbers. A field
named in :data:`NESTED` holds another reason (translated in its turn); the others hold a number and
never a space, a bracket, a comma or a semicolon (which is what keeps the parse unambiguous).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "K_BY_GAMES",
    "K_COMBINED",
    "K_CURVE",
    "K_NEW_PLAYER",
    "K_SINGLE",
    "K_TIER_ABOVE",
    "K_TIER_BELOW",
    "K_TIER_IN",
    "K_ZERO_SUM",
    "NESTED",
    "NOTE_FLOOR",
    "NOTE_MARGIN",
    "NOTE_NEWCOMER_BALANCE",
    "NOTE_RANGE",
    "NOTE_ZERO_SUM",
    "N_",
    "TEMPLATES",
    "parse",
]


def N_(message: str) -> str:
    """Marks a message for the catalogs (``make messages``) where it is defined, not translated."""
    return message


# ---------------------------------------------------------------------------- K
K_TIER_BELOW = N_("rating {rating} is below {bound}")
K_TIER_IN = N_("rating {rating} is in [{low}, {bound})")
K_TIER_ABOVE = N_("rating {rating} is at or above {low}")
K_SINGLE = N_("a single K for every rating")
#: The games-played curve with its numbers: ``250 / (3 + 5)^0.4 floored at 0 = 104.2``.
K_CURVE = N_("{a} / ({games} + {b})^{c} floored at {floor} = {value}")
K_BY_GAMES = N_("K by games played: {curve}")
#: By ``k_factor.mode`` (other than ``rating`` and ``games``).
K_COMBINED: Mapping[str, str] = {
    "sum": N_("sum of the tier K {tier} ({reason}) and K by games {curve}"),
    "product": N_("product of the tier K {tier} ({reason}) and K by games {curve}"),
    "min": N_("min of the tier K {tier} ({reason}) and K by games {curve}"),
    "max": N_("max of the tier K {tier} ({reason}) and K by games {curve}"),
}
K_NEW_PLAYER = N_("{reason}; times {multiplier} for a new player ({games} < {needed} games)")
K_ZERO_SUM = N_("zero-sum: the mean of the players' K; own K {k} ({reason})")

# ---------------------------------------------------------------------------- notes
NOTE_MARGIN = N_("margin of victory: dominance {a} (a) vs {b} (b), margin {margin}, K times {multiplier}")
NOTE_ZERO_SUM = N_(
    "zero-sum: shared K {k} (mean of the players' K), transfer score {score}"
    " (mean of side a's adjusted score and 1 - side b's)"
)
NOTE_NEWCOMER_BALANCE = N_(
    "newcomer balance: gives back {points} of the new-player multiplier's extra change of the opponents"
)
NOTE_FLOOR = N_("rating floor: raised from {after} to {kept}")
NOTE_RANGE = N_("rating range: {after} is outside [{low}, {high}], kept at {kept}")

#: Fields that hold a reason of their own (translated in turn), not a number.
NESTED = frozenset({"reason", "curve"})

#: Every template, in the order :func:`parse` tries them. The order matters where one template can end
#: inside another's field: the zero-sum reason wraps the others, the new-player suffix follows any.
TEMPLATES: tuple[str, ...] = (
    K_ZERO_SUM,
    K_NEW_PLAYER,
    K_BY_GAMES,
    *K_COMBINED.values(),
    K_TIER_BELOW,
    K_TIER_IN,
    K_TIER_ABOVE,
    K_SINGLE,
    K_CURVE,
    NOTE_MARGIN,
    NOTE_ZERO_SUM,
    NOTE_NEWCOMER_BALANCE,
    NOTE_FLOOR,
    NOTE_RANGE,
)
_FIELD = re.compile(r"\{(\w+)\}")


def _pattern(template: str) -> re.Pattern[str]:
    parts = []
    for i, piece in enumerate(_FIELD.split(template)):
        if i % 2 == 0:
            parts.append(re.escape(piece))
        else:
            parts.append(f"(?P<{piece}>.+)" if piece in NESTED else rf"(?P<{piece}>[^\s()\[\],;]+)")
    return re.compile("".join(parts))


_PATTERNS = tuple((t, _pattern(t)) for t in TEMPLATES)


def parse(text: str) -> tuple[str, dict[str, str]] | None:
    """(template, fields) of a reason or note the engine wrote, or ``None`` for any other text.

    ``template.format(**fields) == text`` for every text the templates produce.
    """
    for template, pattern in _PATTERNS:
        found = pattern.fullmatch(text)
        if found:
            return template, found.groupdict()
    return None
