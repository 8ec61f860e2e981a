"""The stored time's text: from_micros gives the text time_text gives the same instant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.service.ledger.rows import from_micros, micros
from sedma_elo.service.payload import time_text

#: Every instant a submission can carry: years 1 to 9999 in UTC, to the microsecond.
_INSTANTS = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999_999)
).map(lambda naive: naive.replace(tzinfo=UTC))


@given(_INSTANTS)
def test_from_micros_writes_the_text_time_text_writes(instant: datetime) -> None:
    """Stored as microseconds and read back, every instant has time_text's text, byte for byte."""
    text = time_text(instant)
    assert text is not None
    assert from_micros(micros(text)) == text


#: Instants a day away from the ends of the range, so that any offset keeps them in years 1 to 9999.
_INNER = _INSTANTS.filter(lambda t: datetime(1, 1, 2, tzinfo=UTC) <= t <= datetime(9999, 12, 30, tzinfo=UTC))


@given(_INNER, st.integers(min_value=-14 * 60, max_value=14 * 60))
def test_an_offset_time_is_written_in_utc(instant: datetime, minutes: int) -> None:
    """The same instant written with another offset has the same text, in UTC with ``Z``."""
    shifted = instant.astimezone(timezone(timedelta(minutes=minutes)))
    text = time_text(shifted)
    assert text == time_text(instant)
    assert text is not None and text.endswith("Z") and "+" not in text


def test_whole_seconds_have_no_fraction() -> None:
    """A time without microseconds is written to the second."""
    assert from_micros(0) == "1970-01-01T00:00:00Z"
    assert from_micros(1) == "1970-01-01T00:00:00.000001Z"
    assert from_micros(None) is None
