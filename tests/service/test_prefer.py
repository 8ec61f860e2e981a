"""Reading ``Prefer`` (RFC 7240) for ``return=minimal``."""

from __future__ import annotations

import pytest

from sedma_elo.service.api.prefer import wants_minimal


@pytest.mark.parametrize(
    "values",
    [
        ["return=minimal"],
        ["RETURN=Minimal"],
        [' return = "minimal" '],
        ["return=minimal; charset=x"],
        ["respond-async, wait=5, return=minimal"],
        ["wait=5", "return=minimal"],
    ],
)
def test_these_values_ask_the_summary(values: list[str]) -> None:
    """The preference in any case, quoted, with parameters, among others or in a later header."""
    assert wants_minimal(values)


@pytest.mark.parametrize(
    "values",
    [
        [],
        [""],
        ["return=representation"],
        ["return=minimalist"],
        ["minimal"],
        ["wait=5, respond-async"],
        ["return=representation", "return=minimal"],
        ["return=representation, return=minimal"],
        ["x-return=minimal"],
    ],
)
def test_these_values_keep_the_full_answer(values: list[str]) -> None:
    """No preference, another one, another value, or a first ``return`` that is not minimal."""
    assert not wants_minimal(values)
