"""The plain-words sentences of a rating change, in any language a gettext translator speaks.

Every sentence is one message of the gettext catalogs (``sedma_elo.i18n``): the builders here take a
*translator*, anything with ``gettext`` and ``ngettext`` (``gettext.NullTranslations``,
``babel.support.Translations``), and default to English. The core imports no catalog: callers that
want another language pass ``sedma_elo.i18n.translations(lang)``.

The messages use ``str.format`` fields. English messages spell small counts as words (``{count}``:
"three 16ers"); translations write the digits (``{n}``), so that no catalog has to agree numerals
with nouns. Numbers take the language's decimal mark (the catalog's translation of "0.5"); player
ids never do.
"""

from __future__ import annotations

import gettext
import math
import re
from collections.abc import Sequence
from typing import Any, Protocol

from .engine import BonusTerm, MalusTerm, PlayerChange, ScoreBreakdown
from .reasons import N_, NESTED, parse

__all__ = [
    "ENGLISH",
    "N_",
    "SIMILAR_RATING",
    "Translator",
    "change_sentences",
    "decimal",
    "k_reason_text",
    "note_sentence",
]

_MINUS = "\u2212"
_TIMES = "\u00d7"
_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
#: Opponents within this many rating points are "similarly rated", not "stronger" or "weaker": a
#: 15-point gap moves the expected score by about 0.02.
SIMILAR_RATING = 15.0


class Translator(Protocol):
    """What the sentence builders need of a gettext catalog."""

    def gettext(self, message: str, /) -> str:
        """``message`` translated (itself when the catalog lacks it)."""

    def ngettext(self, singular: str, plural: str, n: int, /) -> str:
        """The form of ``singular``/``plural`` for the count ``n``, translated."""


#: The identity translator: the messages as written, in English.
ENGLISH: Translator = gettext.NullTranslations()


def Np_(singular: str, plural: str) -> tuple[str, str]:
    """Marks a singular/plural pair for the catalogs (see :func:`N_`)."""
    return singular, plural


#: Fields that hold player ids (or sentences naming them): never touched by the decimal mark.
_NAMES = frozenset({"who", "you", "name", "mates", "opponents", "first", "second", "text"})
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")


def _mark(tr: Translator) -> str:
    # Translators: the number one half as your language writes it; its middle is the decimal mark.
    return tr.gettext("0.5")[1:-1] or "."


def decimal(text: str, tr: Translator = ENGLISH) -> str:
    """``text`` with each decimal point between two digits written as ``tr``'s language does."""
    mark = _mark(tr)
    return text if mark == "." else _DECIMAL.sub(mark, text)


def _say(tr: Translator, message: str, **fields: Any) -> str:
    """``message`` translated, its fields filled in; numbers take the language's decimal mark."""
    if tr is ENGLISH:  # the catalog-less translator: the message itself, decimal point "."
        return message.format(**fields)
    mark = _mark(tr)
    if mark != ".":
        fields = {k: v if k in _NAMES else _DECIMAL.sub(mark, str(v)) for k, v in fields.items()}
    return tr.gettext(message).format(**fields)


def _end(tr: Translator, text: str) -> str:
    """``text`` as a sentence: first letter upper case, the language's full stop."""
    return tr.gettext("{text}.").format(text=text[:1].upper() + text[1:])


def _and(tr: Translator, names: Sequence[str]) -> str:
    """Names joined as in "bob and dave" (sides have one or two players)."""
    text = names[0] if names else ""
    for name in names[1:]:
        text = tr.gettext("{first} and {second}").format(first=text, second=name)
    return text


# ---------------------------------------------------------------------------- K and notes
def k_reason_text(reason: str, tr: Translator = ENGLISH) -> str:
    """The rules' reason for a K (``PlayerChange.k_reason``) in ``tr``'s language.

    Every reason the engine writes (:mod:`sedma_elo.core.reasons`: tiers, games curve, new players,
    zero-sum) is translated with its numbers; any other text is returned as it is.
    """
    found = parse(reason)
    if found is None:
        return reason
    template, fields = found
    for key in NESTED.intersection(fields):
        fields[key] = k_reason_text(fields[key], tr)
    return _say(tr, template, **fields)


def note_sentence(note: str, tr: Translator = ENGLISH) -> str:
    """One of the rules' notes on a variant (``PlayerChange.notes``) as a sentence in ``tr``'s language."""
    return _end(tr, k_reason_text(note, tr))


def k_sentence(k: float, reason: str, tr: Translator = ENGLISH) -> str:
    """``"K is 40: rating 1000 is below 1200."``"""
    return _say(tr, "K is {k}: {reason}.", k=k_text(k), reason=k_reason_text(reason, tr))


def k_text(k: float) -> str:
    """K as the sentences print it: an int as it is, a float K (games curve, multipliers) to 4 places."""
    return str(k) if isinstance(k, int) else plain(k, 4)


# ---------------------------------------------------------------------------- the headline
def headline(
    change: PlayerChange,
    name: str | None,
    mates: Sequence[str],
    other: Sequence[str],
    tr: Translator = ENGLISH,
) -> str:
    """The outcome, the strength of the other side, the expectation and the change, in one sentence.

    ``name`` is the player's id, or ``None`` to address the player ("You won ...").
    """
    team = len(other) > 1
    gap = change.opponent_rating - change.team_rating
    if gap == 0:
        strength = tr.gettext(N_("an equally rated team") if team else N_("an equally rated player"))
    elif abs(gap) < SIMILAR_RATING:
        strength = tr.gettext(N_("a similarly rated team") if team else N_("a similarly rated player"))
    elif gap > 0:
        strength = tr.gettext(N_("a stronger team") if team else N_("a stronger player"))
    else:
        strength = tr.gettext(N_("a weaker team") if team else N_("a weaker player"))
    details = _say(
        tr,
        N_("team ratings {own} against {other}, expected score {expected}")
        if team
        else N_("ratings {own} against {other}, expected score {expected}"),
        own=plain(change.team_rating, 1),
        other=plain(change.opponent_rating, 1),
        expected=f"{change.expected:.2f}",
    )
    if name is None:
        who = _say(tr, "You (with {mates})", mates=_and(tr, mates)) if mates else tr.gettext("You")
        messages = {
            "win": N_(
                "{you} won against {opponents}, {strength} ({details}): {delta}, from {before} to {after}."
            ),
            "loss": N_(
                "{you} lost to {opponents}, {strength} ({details}): {delta}, from {before} to {after}."
            ),
            "draw": N_(
                "{you} drew with {opponents}, {strength} ({details}): {delta}, from {before} to {after}."
            ),
        }
    else:
        who = _say(tr, "{name} (with {mates})", name=name, mates=_and(tr, mates)) if mates else name
        messages = {
            "win": N_(
                "{who} won against {opponents}, {strength} ({details}): {delta}, from {before} to {after}."
            ),
            "loss": N_(
                "{who} lost to {opponents}, {strength} ({details}): {delta}, from {before} to {after}."
            ),
            "draw": N_(
                "{who} drew with {opponents}, {strength} ({details}): {delta}, from {before} to {after}."
            ),
        }
    return _say(
        tr,
        messages[change.score.outcome],
        who=who,
        you=who,
        opponents=_and(tr, other),
        strength=strength,
        details=details,
        delta=signed_int(change.delta),
        before=change.rating_before,
        after=change.rating_after,
    )


# ---------------------------------------------------------------------------- the score
_BASE = {
    "win": N_("a win scores {base}"),
    "loss": N_("a loss scores {base}"),
    "draw": N_("a draw scores {base}"),
}
_BONUS_NAMES = {
    "won_by_16": Np_("{count} 16er", "{count} 16ers"),
    "won_by_24": Np_("{count} 24er", "{count} 24ers"),
    "won_by_4_and_last": Np_("{count} round won with 4 and last", "{count} rounds won with 4 and last"),
}


def _counted(tr: Translator, forms: tuple[str, str], n: int) -> str:
    return tr.ngettext(forms[0], forms[1], n).format(count=count_word(n), n=n)


def _bonus_text(t: BonusTerm, tr: Translator) -> str:
    name = _counted(tr, _BONUS_NAMES[t.kind], t.count)
    product = f"{t.count} {_TIMES} {plain(t.per_round)}"
    if t.capped:
        return _say(
            tr,
            "{name} would add {product} = {value}, capped at {cap}",
            name=name,
            product=product,
            value=signed(t.uncapped),
            cap=signed(t.cap),
        )
    message = tr.ngettext("{name} adds {product} = {value}", "{name} add {product} = {value}", t.count)
    return _say(tr, message, name=name, product=product, value=signed(t.value))


def _malus_text(m: MalusTerm, tr: Translator) -> str:
    name = _counted(tr, Np_("{count} bad move", "{count} bad moves"), m.count)
    product = f"{m.count} {_TIMES} {plain(m.per_bad_move)}"
    if m.capped:
        return _say(
            tr,
            "{name} would cost {product} = {value}, capped at {cap}",
            name=name,
            product=product,
            value=signed(-m.uncapped),
            cap=signed(-m.cap),
        )
    message = tr.ngettext("{name} costs {product} = {value}", "{name} cost {product} = {value}", m.count)
    return _say(tr, message, name=name, product=product, value=signed(-m.value))


_KEEPS = {
    ("loss", True): N_("As the loser {name} keeps {share} of the bonus of {bonus}: {kept}."),
    ("draw", True): N_("On a draw {name} keeps {share} of the bonus of {bonus}: {kept}."),
    ("win", True): N_("Here {name} keeps {share} of the bonus of {bonus}: {kept}."),
    ("loss", False): N_("As the loser you keep {share} of the bonus of {bonus}: {kept}."),
    ("draw", False): N_("On a draw you keep {share} of the bonus of {bonus}: {kept}."),
    ("win", False): N_("Here you keep {share} of the bonus of {bonus}: {kept}."),
}


def score_lines(
    s: ScoreBreakdown,
    name: str | None,
    tr: Translator = ENGLISH,
    cleared: tuple[float, float] | None = None,
) -> list[str]:
    """The sentences on the adjusted score: base and bonuses, the share kept, the malus, the clamp.

    ``name`` (the player's id, ``None`` for "you") is the only input that is not part of ``s``.
    ``cleared`` is :func:`erased` of the exact breakdown when ``s`` was read back from JSON, whose
    shortened single-precision values would not subtract to the same amounts.
    """
    parts = [_say(tr, _BASE[s.outcome], base=plain(s.base))]
    bonus_texts = [_bonus_text(t, tr) for t in s.bonuses if t.count > 0]
    out = [_end(tr, tr.gettext("; ").join(parts + bonus_texts))]
    if bonus_texts and s.bonus_scale != 1.0:
        if s.bonus_scale > 0:
            share = _say(tr, "{percent}%", percent=plain(s.bonus_scale * 100, 2))
        else:
            share = tr.gettext("none")
        out.append(
            _say(
                tr,
                _KEEPS[(s.outcome, name is not None)],
                name=name,
                share=share,
                bonus=signed(s.bonus_total),
                kept=signed(s.bonus_scaled),
            )
        )
    if s.malus.count > 0:
        out.append(_end(tr, _malus_text(s.malus, tr)))
    out.append(_adjusted_sentence(s, name, tr, cleared or erased(s)))
    return out


def erased(s: ScoreBreakdown) -> tuple[float, float]:
    """(bonus the clamp took away, malus the clamp gave back), both >= 0."""
    if s.clamp == "max":
        return min(s.unclamped - s.adjusted, s.bonus_scaled), 0.0
    if s.clamp == "min":
        return 0.0, min(s.adjusted - s.unclamped, s.malus.value)
    return 0.0, 0.0


_CLAMPED = {
    ("max", True): N_(
        "Adjusted score: {formula} = {unclamped}, above the maximum, so {name}'s score was "
        "clamped to {adjusted}"
    ),
    ("min", True): N_(
        "Adjusted score: {formula} = {unclamped}, below the minimum, so {name}'s score was "
        "clamped to {adjusted}"
    ),
    ("max", False): N_(
        "Adjusted score: {formula} = {unclamped}, above the maximum, so your score was clamped to {adjusted}"
    ),
    ("min", False): N_(
        "Adjusted score: {formula} = {unclamped}, below the minimum, so your score was clamped to {adjusted}"
    ),
}


def _adjusted_sentence(
    s: ScoreBreakdown, name: str | None, tr: Translator, cleared: tuple[float, float]
) -> str:
    terms = [plain(s.base)]
    if s.bonus_scaled:
        terms.append(f"+ {plain(s.bonus_scaled)}")
    if s.malus.value:
        terms.append(f"{_MINUS} {plain(s.malus.value)}")
    if len(terms) == 1 and s.clamp == "none":
        message = N_("With no bonus and no malus the adjusted score stays {score}.")
        return _say(tr, message, score=plain(s.adjusted))
    formula = " ".join(terms)
    if s.clamp == "none":
        return _say(tr, "Adjusted score: {formula} = {score}.", formula=formula, score=plain(s.adjusted))
    text = _say(
        tr,
        _CLAMPED[(s.clamp, name is not None)],
        formula=formula,
        unclamped=plain(s.unclamped),
        name=name,
        adjusted=plain(s.adjusted),
    )
    bonus_erased, malus_erased = cleared
    if s.clamp == "max" and s.bonus_scaled > 0:
        if bonus_erased >= s.bonus_scaled:
            text += _say(tr, ": the clamp erased the whole bonus of {bonus}", bonus=signed(s.bonus_scaled))
        else:
            text += _say(
                tr,
                ": the clamp erased {part} of the bonus of {bonus}",
                part=plain(bonus_erased),
                bonus=signed(s.bonus_scaled),
            )
    elif s.clamp == "min" and s.malus.value > 0:
        if malus_erased >= s.malus.value:
            text += _say(tr, ": the clamp erased the whole malus of {malus}", malus=signed(-s.malus.value))
        else:
            text += _say(
                tr,
                ": the clamp erased {part} of the malus of {malus}",
                part=plain(malus_erased),
                malus=signed(-s.malus.value),
            )
    return tr.gettext("{text}.").format(text=text)


# ---------------------------------------------------------------------------- the change
def change_sentence(change: PlayerChange, tr: Translator = ENGLISH) -> str:
    """``"Change: K × (score − expected) = 40 × (1 − 0.36) = +25.60, rounded to +26."``"""
    exact = change.rating_before + change.change
    formula = _say(
        tr,
        "Change: K × (score − expected) = {k} × ({score} − {expected})",
        k=k_text(change.k),
        score=plain(change.score.adjusted),
        expected=f"{change.expected:.2f}",
    )
    if exact - math.floor(exact) == 0.5:
        return _say(
            tr,
            "{formula} = {change}; {exact} is exactly half-way and was rounded to {after} ({delta}).",
            formula=formula,
            change=signed(change.change, 6),
            exact=plain(exact, 6),
            after=change.rating_after,
            delta=signed_int(change.delta),
        )
    frac = abs(change.change) % 1
    places = 6 if abs(frac - 0.5) < 0.005 else 2
    return _say(
        tr,
        "{formula} = {change}, rounded to {delta}.",
        formula=formula,
        change=signed(change.change, places, fixed=True),
        delta=signed_int(change.delta),
    )


def change_sentences(
    change: PlayerChange,
    mates: Sequence[str],
    other: Sequence[str],
    *,
    second_person: bool = False,
    translator: Translator = ENGLISH,
    cleared: tuple[float, float] | None = None,
) -> list[str]:
    """All sentences of one player's change: headline, K, score, change and the rules' notes.

    ``cleared``: see :func:`score_lines`.
    """
    name = None if second_person else change.player_id
    return [
        headline(change, name, mates, other, translator),
        k_sentence(change.k, change.k_reason, translator),
        *score_lines(change.score, name, translator, cleared),
        change_sentence(change, translator),
        *(note_sentence(note, translator) for note in change.notes),
    ]


# ---------------------------------------------------------------------------- numbers
def count_word(n: int) -> str:
    """``n`` in English words up to ten ("three"), digits above."""
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


def plain(x: float, places: int = 4) -> str:
    """``x`` rounded to ``places`` decimals without trailing zeros (``0.15``, ``1``, ``1050.5``)."""
    text = f"{x:.{places}f}".rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    return text.replace("-", _MINUS)


def signed(x: float, places: int = 4, *, fixed: bool = False) -> str:
    """``x`` with a ``+`` or a real minus sign."""
    text = f"{abs(x):.{places}f}" if fixed else plain(abs(x), places)
    return ("+" if x >= 0 else _MINUS) + text


def signed_int(n: int) -> str:
    """``+26``, ``−25``, ``+0``."""
    return f"+{n}" if n >= 0 else f"{_MINUS}{-n}"
