"""The bulk import's row builder: the canonical text it hashes is POST's, byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.batch.history import HistoryArrays
from sedma_elo.core.model import MAX_COUNT, Match, PlayerStats, Winner
from sedma_elo.service.ledger.import_rows import canonical_texts
from sedma_elo.service.payload import submission_from_match

_ids = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), min_size=1, max_size=8
).filter(lambda s: s == s.strip() and "/" not in s)
_counts = st.builds(PlayerStats, *(st.integers(0, MAX_COUNT) for _ in range(4)))
_times = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.datetimes(
        min_value=datetime(1, 1, 2),
        max_value=datetime(9999, 12, 30),
        timezones=st.just(timezone(timedelta(hours=-5))),
    ),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)),
)


@st.composite
def _matches(draw: st.DrawFn) -> list[Match]:
    n = draw(st.integers(1, 6))
    out = []
    for i in range(n):
        a, b = draw(st.lists(_ids, min_size=2, max_size=2, unique=True))
        winner: Winner = draw(st.sampled_from(["a", "b", "draw"]))
        mid = draw(_ids) + f"-{i}"
        out.append(
            Match.single(a, b, winner, draw(_counts), draw(_counts), match_id=mid, played_at=draw(_times))
        )
    return out


@given(_matches())
def test_canonical_texts_equal_the_submissions_text(matches: list[Match]) -> None:
    """Each body and played_at built from the columns equals submission_from_match's (what POST stores)."""
    arrays = HistoryArrays.from_matches(matches)
    played, bodies = canonical_texts(arrays)
    subs = [submission_from_match(m) for m in matches]
    assert bodies == [s.body for s in subs]
    assert played == [s.played_at for s in subs]
