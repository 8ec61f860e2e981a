"""Single JSON values formatted directly, checked against json.dumps."""

from __future__ import annotations

import enum
import json

import pytest

from sedma_elo.core._jsontext import json_scalar


class _Level(enum.IntEnum):
    HIGH = 3


class _Half(float):
    def __repr__(self) -> str:
        return "half"


NUMBERS = [0, -5, 2**70, 0.1, -0.0, 1e300, 5e-324, float("nan"), float("inf"), float("-inf")]
OTHERS = [True, False, None, "", 'é "quoted" \\ back\nslash\u2028\x00', "\ud800", _Level.HIGH, _Half(0.5)]


@pytest.mark.parametrize("value", [*NUMBERS, *OTHERS])
def test_json_scalar_is_what_json_dumps_writes(value: float | str | None) -> None:
    """Numbers, strings, None, bools, NaN, infinities and int/float subclasses read as json.dumps has them."""
    assert json_scalar(value) == json.dumps(value, ensure_ascii=False)
