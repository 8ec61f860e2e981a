"""Key strength (issue 12 row 10): only keys that could have come from a random generator are accepted."""

from __future__ import annotations

import secrets

import pytest

from sedma_elo.errors import ValidationError
from sedma_elo.service.auth.keys import check_key_strength, create_key, estimated_bits, list_keys
from sedma_elo.storage import open_database


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("sk_" + "a" * 29, "distinct"),
        ("sk_" + " " * 29, "A-Z"),
        ("sk_" + "\t" * 40, "A-Z"),
        ("sk_" + "0123456789" * 4, "distinct"),  # ten distinct characters
        ("sk_" + "abcdefghijklmnopqrstuvwxyz" + "~~~", "A-Z"),
        ("sk_" + "abc=def/ghi+jkl" * 2, "A-Z"),
    ],
)
def test_a_weak_key_is_refused_saying_why(key: str, says: str) -> None:
    """``sk_`` + one repeated character, spaces, few distinct characters or a foreign one is refused."""
    with pytest.raises(ValidationError, match="key") as raised:
        check_key_strength("key", key)
    assert says in str(raised.value)


def test_a_key_below_the_entropy_floor_is_refused() -> None:
    """Twelve distinct characters, but eleven of them once and one repeated: below 96 bits."""
    body = "abcdefghijk" + "z" * 18
    assert len(set(body)) == 12
    assert estimated_bits(body) < 96
    with pytest.raises(ValidationError, match="entropy"):
        check_key_strength("admin_key", "sk_" + body)


@pytest.mark.parametrize("length", [29, 43])
def test_random_keys_pass(length: int) -> None:
    """Random URL-safe bodies of the minimum length and of a generated key's length pass, 200 of each."""
    for _ in range(200):
        check_key_strength("key", "sk_" + secrets.token_urlsafe(32)[:length])


def test_estimated_bits_of_simple_texts() -> None:
    """0 bits for one repeated character; n * log2(k) for n characters cycling through k."""
    assert estimated_bits("") == 0
    assert estimated_bits("a" * 30) == 0
    assert estimated_bits("ab" * 16) == pytest.approx(32.0)
    assert estimated_bits("abcd" * 8) == pytest.approx(64.0)


def test_an_imported_weak_key_stores_nothing(tmp_path: object) -> None:
    """create_key with a weak ``secret`` raises naming ``key`` and leaves the key table empty."""
    db = open_database(f"sqlite:///{tmp_path}/keys.db")
    try:
        with pytest.raises(ValidationError, match="key"):
            create_key(db, "admin", "weak", secret="sk_" + "a" * 29)
        assert list_keys(db) == []
    finally:
        db.dispose()
