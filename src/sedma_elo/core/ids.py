"""The id rule: what a player id or a match id may be, wherever it enters.

One rule for the engine's :class:`~sedma_elo.core.model.Match`, history files, the HTTP API, the
CLI and game records:

1. the id is a string, normalised to Unicode NFC before anything else (``"José"`` typed as
   ``e`` + combining acute and as ``é`` is one player);
2. after normalisation it has 1 to :data:`MAX_ID_LENGTH` (128) characters;
3. it holds no ``/`` (ids travel in URL paths) and no character of :data:`REFUSED_RANGES`:
   controls (C0, DEL, C1 such as U+0085 and U+009B), format characters (zero-width space U+200B,
   the bidi embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069, the byte order
   mark U+FEFF, soft hyphen...), line and paragraph separators (U+2028, U+2029) and surrogates;
4. it neither starts nor ends with whitespace.

The refused characters are the general categories Cc, Cf, Cs, Zl and Zp as of Unicode 14.0,
frozen in a table rather than read from :mod:`unicodedata`: an id accepted once stays valid on
every later Python, whatever Unicode version it ships (tests/core/test_ids.py checks the table
against the categories).
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Collection

from ..errors import ValidationError

__all__ = [
    "ID_PATTERN",
    "ID_PREFIX_PATTERN",
    "MAX_ID_LENGTH",
    "REFUSED_RANGES",
    "all_valid",
    "check_id",
    "check_id_prefix",
    "id_problem",
    "normalize_id",
]

MAX_ID_LENGTH = 128
#: Inclusive code point ranges refused anywhere in an id (Cc, Cf, Cs, Zl, Zp of Unicode 14.0).
REFUSED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F),
    (0x007F, 0x009F),
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xD800, 0xDFFF),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
_STARTS = tuple(start for start, _ in REFUSED_RANGES)


def _refused(char: str) -> bool:
    code = ord(char)
    i = bisect_right(_STARTS, code) - 1
    return i >= 0 and code <= REFUSED_RANGES[i][1]


def _name(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} ({name})" if name else f"U+{ord(char):04X}"


def _character_problem(text: str) -> str | None:
    # isprintable() is False for every refused character (and for every whitespace but " "), so
    # the loop runs only for the rare id that holds one of those.
    if not text.isprintable():
        for char in text:
            if _refused(char):
                return f"must not contain the control or format character {_name(char)}"
    if "/" in text:
        return "must not contain '/'"
    return None


def id_problem(text: str) -> str | None:
    """Why ``text`` (already NFC) is not a valid id, or None when it is one."""
    if not text or text.isspace():
        return "must not be empty"
    if len(text) > MAX_ID_LENGTH:
        return f"must be at most {MAX_ID_LENGTH} characters, got {len(text)}"
    problem = _character_problem(text)
    if problem is None and (text[0].isspace() or text[-1].isspace()):
        return "must not start or end with whitespace"
    return problem


def all_valid(values: Collection[str]) -> bool:
    """True when :func:`id_problem` accepts every one of ``values`` (already NFC).

    The same rule checked with C-speed builtins over all values at once, for readers of large
    files; False means "look at each value", not that one is necessarily bad.
    """
    if not values:
        return True
    items = list(values)
    joined = "".join(items)
    return (
        min(map(len, items)) >= 1
        and max(map(len, items)) <= MAX_ID_LENGTH
        and joined.isprintable()
        and "/" not in joined
        and items == list(map(str.strip, items))
    )


def normalize_id(text: str) -> str:
    """``text`` in Unicode NFC (ASCII text is returned as it is)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def check_id(field: str, value: object) -> str:
    """Return ``value`` normalised to NFC if it is a valid id (see the module), else raise.

    Raises:
        ValidationError: not a string, empty, too long, or holding a refused character (the
            message names ``field`` and the character's code point).
    """
    if type(value) is str:
        known = _KNOWN.get(value)
        if known is not None:
            return known
    elif not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    text = normalize_id(value)
    problem = id_problem(text)
    if problem is not None:
        raise ValidationError(field, problem)
    if len(_KNOWN) >= _KNOWN_SIZE:
        _KNOWN.clear()
    _KNOWN[value] = text
    return text


# Ids seen valid, with their NFC form: the engine checks the same few thousand players match
# after match, and a dict lookup costs less than the checks. Bounded by emptying it when full.
_KNOWN: dict[str, str] = {}
_KNOWN_SIZE = 1 << 16


def check_id_prefix(field: str, value: object) -> str:
    """Return ``value`` in NFC if it can start an id (1 to 128 characters, none refused), else raise.

    For searches by the start of an id: unlike an id, a prefix may end with a space.

    Raises:
        ValidationError: not a string, empty, too long, or holding ``/`` or a refused character.
    """
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    text = normalize_id(value)
    if not text:
        raise ValidationError(field, "must not be empty")
    if len(text) > MAX_ID_LENGTH:
        raise ValidationError(field, f"must be at most {MAX_ID_LENGTH} characters, got {len(text)}")
    problem = _character_problem(text)
    if problem is not None:
        raise ValidationError(field, problem)
    return text


def _pattern(*, prefix: bool = False) -> str:
    """The rule as a regular expression, for JSON Schema and OpenAPI (NFC aside).

    Python's ``re``, pydantic's Rust regex and ECMAScript all read it the same: ``\\uXXXX``
    escapes in the basic plane, the characters themselves above it; surrogates are left out (no
    JSON text or URL decodes to one).
    """

    def char(code: int) -> str:
        return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)

    ranges = "".join(char(a) if a == b else f"{char(a)}-{char(b)}" for a, b in REFUSED_RANGES if a != 0xD800)
    inner = f"[^/{ranges}]"
    if prefix:
        return f"^{inner}+$"
    edge = f"[^/\\s{ranges}]"
    return f"^{edge}(?:{inner}*{edge})?$"


#: :func:`id_problem` as a pattern (a regular expression for JSON Schema; lengths are separate).
ID_PATTERN = _pattern()
#: :func:`check_id_prefix` as a pattern (the start of an id may end with a space).
ID_PREFIX_PATTERN = _pattern(prefix=True)
