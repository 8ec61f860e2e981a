"""The id rule: NFC first, 1 to 128 characters, no '/', control or format character, no edge blanks."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from sedma_elo.core.ids import (
    ID_PATTERN,
    ID_PREFIX_PATTERN,
    MAX_ID_LENGTH,
    REFUSED_RANGES,
    all_valid,
    check_id,
    check_id_prefix,
    id_problem,
)
from sedma_elo.errors import ValidationError

REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def _in_table(code: int) -> bool:
    return any(a <= code <= b for a, b in REFUSED_RANGES)


@pytest.mark.skipif(unicodedata.unidata_version != "14.0.0", reason="the table is frozen at Unicode 14.0")
def test_table_is_the_refused_categories_of_unicode_14() -> None:
    """The frozen table holds exactly the code points of categories Cc, Cf, Cs, Zl and Zp."""
    derived = [c for c in range(0x110000) if unicodedata.category(chr(c)) in REFUSED_CATEGORIES]
    assert derived == [c for a, b in REFUSED_RANGES for c in range(a, b + 1)]


def test_table_characters_are_still_refused_categories() -> None:
    """Whatever Unicode this Python ships, every table entry is still a control, format or separator."""
    for a, b in REFUSED_RANGES:
        for code in range(a, b + 1):
            assert unicodedata.category(chr(code)) in REFUSED_CATEGORIES, hex(code)


def test_nfd_and_nfc_spellings_are_one_id() -> None:
    """'José' typed with a combining accent normalises to the precomposed form."""
    nfd, nfc = "Jose\u0301", "Jos\u00e9"
    assert nfd != nfc
    assert check_id("player_a", nfd) == nfc
    assert check_id("player_a", nfc) == nfc


@pytest.mark.parametrize(
    ("char", "code"),
    [
        ("\x00", "U+0000"),
        ("\t", "U+0009"),
        ("\x7f", "U+007F"),
        ("\u0085", "U+0085"),
        ("\u009b", "U+009B"),
        ("\u200b", "U+200B"),
        ("\u2028", "U+2028"),
        ("\u2029", "U+2029"),
        ("\u202e", "U+202E"),
        ("\u2066", "U+2066"),
        ("\ufeff", "U+FEFF"),
        ("\U000e0001", "U+E0001"),
    ],
)
def test_control_and_format_characters_are_refused_by_code_point(char: str, code: str) -> None:
    """A control, format, separator or bidi character inside an id is refused, naming field and code point."""
    with pytest.raises(ValidationError, match=rf"^player_b: must not contain .*{re.escape(code)}"):
        check_id("player_b", f"ali{char}ce")


def test_slash_is_refused() -> None:
    """Ids travel in URL paths, so '/' is refused."""
    with pytest.raises(ValidationError, match=r"^player_a: must not contain '/'$"):
        check_id("player_a", "team/alice")


@pytest.mark.parametrize("text", [" alice", "alice ", "alice\u00a0", "\u3000alice"])
def test_surrounding_whitespace_is_refused(text: str) -> None:
    """An id may not start or end with whitespace (of any script)."""
    with pytest.raises(ValidationError, match="must not start or end with whitespace"):
        check_id("match_id", text)


def test_inner_space_and_letters_of_any_script_are_allowed() -> None:
    """Spaces inside, accents, CJK, emoji and symbols are ordinary id characters."""
    for text in ("Ana Maria", "Đorđe", "李小龍", "🂡 ace", "a:b@c#d", "x" * MAX_ID_LENGTH):
        assert check_id("player_a", text) == text


@pytest.mark.parametrize("text", ["", "   ", "\u3000"])
def test_empty_or_blank_is_refused(text: str) -> None:
    """An empty or all-blank id is refused."""
    with pytest.raises(ValidationError, match=r"^player_a: must not be empty$"):
        check_id("player_a", text)


def test_length_is_counted_after_normalisation() -> None:
    """128 characters in NFC are fine even when the NFD input is longer; 129 are not."""
    assert check_id("player_a", "e\u0301" * MAX_ID_LENGTH) == "\u00e9" * MAX_ID_LENGTH
    with pytest.raises(ValidationError, match="at most 128 characters, got 129"):
        check_id("player_a", "x" * (MAX_ID_LENGTH + 1))


def test_non_string_is_refused() -> None:
    """An id must be a string."""
    with pytest.raises(ValidationError, match=r"^match_id: must be a string, got int$"):
        check_id("match_id", 7)


def test_prefix_may_end_with_a_space_but_not_hold_controls() -> None:
    """A search prefix follows the character rule but may end with a blank (the start of 'Ana Maria')."""
    assert check_id_prefix("prefix", "Ana ") == "Ana "
    with pytest.raises(ValidationError, match=r"^prefix: must not contain .*U\+0085"):
        check_id_prefix("prefix", "Ana\u0085")


any_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@given(st.lists(any_text, max_size=5))
def test_all_valid_agrees_with_id_problem(values: list[str]) -> None:
    """The bulk check never passes a bad id, and decides exactly when every character is printable."""
    values = [unicodedata.normalize("NFC", v) for v in values]
    one_by_one = all(id_problem(v) is None for v in values)
    if all_valid(values):
        assert one_by_one
    if "".join(values).isprintable():  # else it only says "look at each value"
        assert all_valid(values) == one_by_one


@given(any_text)
def test_pattern_agrees_with_id_problem(text: str) -> None:
    """ID_PATTERN (for OpenAPI) accepts exactly the NFC texts the rule accepts."""
    text = unicodedata.normalize("NFC", text)
    assert (re.fullmatch(ID_PATTERN, text) is not None and len(text) >= 1) == (id_problem(text) is None)


@given(any_text)
def test_prefix_pattern_agrees_with_check_id_prefix(text: str) -> None:
    """ID_PREFIX_PATTERN (for OpenAPI) accepts exactly the NFC prefixes check_id_prefix accepts."""
    text = unicodedata.normalize("NFC", text)
    try:
        check_id_prefix("prefix", text)
        accepted = True
    except ValidationError:
        accepted = False
    assert (re.fullmatch(ID_PREFIX_PATTERN, text) is not None) == accepted


@pytest.mark.parametrize("text", ["alice", "a b", "team/alice", "a\u202eb", "a\u0085", " a", "x\U000e0001"])
def test_pattern_reads_the_same_in_pydantic(text: str) -> None:
    """pydantic's Rust regex engine reads ID_PATTERN as Python's re does."""
    adapter = TypeAdapter(Annotated[str, Field(pattern=ID_PATTERN)])
    try:
        adapter.validate_python(text)
        accepted = True
    except PydanticValidationError:
        accepted = False
    assert accepted == (re.fullmatch(ID_PATTERN, text) is not None)
