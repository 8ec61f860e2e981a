"""The stored first answer to a match post: its text, built piecewise on the write path for speed."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sedma_elo.core.engine import RatingResult, rate
from sedma_elo.core.ids import normalize_id
from sedma_elo.core.model import PlayerStats
from sedma_elo.core.rules import MAX_RATING, MIN_RATING, REFERENCE_RULES, BonusRule, Rules
from sedma_elo.service.ledger import Ledger, VersionInfo
from sedma_elo.service.ledger.views import response_text
from sedma_elo.service.payload import MatchIn, Submission, submission_from_payload, time_text

VERSION = VersionInfo(3, "reference \u00e9dition", REFERENCE_RULES, True, "2026-11-29T12:00:00Z")
IDS = st.text(
    st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"), blacklist_characters="/"),
    min_size=1,
    max_size=100,
).map(lambda s: normalize_id(f"p{s.strip()}"))
COUNTS = st.builds(
    PlayerStats,
    st.integers(0, 1_000_000),
    st.integers(0, 12),
    st.integers(0, 12),
    st.integers(0, 12),
)
#: Players (the first two in one against one), the form, the winner and the sequence of a match.
MATCH_SHAPES = {
    "ids": st.lists(IDS, min_size=4, max_size=4, unique=True),
    "team": st.booleans(),
    "winner": st.sampled_from(["a", "b", "draw"]),
    "seq": st.integers(1, 2**40),
}
#: Counts up to 20: past every cap of the reference rules and of the variants below.
SMALL_COUNTS = st.builds(PlayerStats, *[st.integers(0, 20)] * 4)
R = REFERENCE_RULES
RULES = (
    R,
    R.replace(name="double", arithmetic="float64", rounding="half_up", team_rating="sum"),
    R.replace(name="games", k_mode="games", k_new_player_games=10, k_new_player_multiplier=1.5),
    R.replace(name="mixed", k_mode="max", k_games_a=30.0, k_games_b=1.0, k_games_c=0.5),
    R.replace(name="zero-sum", zero_sum=True, rating_floor=900),
    R.replace(name="margin", margin_scale=0.5, margin_weight_16=1.0, margin_weight_bad_moves=-0.5),
    R.replace(
        name="narrow",
        score_min=0.2,
        score_max=0.9,
        loser_bonus_scale=0.0,
        draw_bonus_scale=1.0,
        malus_cap=0.05,
        bonus_24=BonusRule(0.33, 0.5),
    ),
)


def _plain_text(
    sub_body: str, seq: int, played_at: str | None, result: RatingResult, version: VersionInfo = VERSION
) -> str:
    """The answer as json.dumps of :meth:`Ledger.match_view` (the form GET /v1/matches/{id} serves)."""
    view = Ledger.match_view(json.loads(sub_body), seq, played_at, version, result, False, None)
    return json.dumps(view, separators=(",", ":"), ensure_ascii=False)


def _submission(ids: list[str], team: bool, winner: str, stats: list[PlayerStats]) -> Submission:
    """A posted match between ``ids`` (the first two in one against one), through the payload path."""
    players = {"team_a": ids[:2], "team_b": ids[2:]} if team else {"player_a": ids[0], "player_b": ids[1]}
    keys = ids if team else ["a", "b"]
    payload = {
        "match_id": "m-1",
        "played_at": "2026-11-29T13:00:00+01:00",
        "winner": winner,
        **players,
        "stats": {key: s.to_dict() for key, s in zip(keys, stats, strict=False)},
    }
    return submission_from_payload(MatchIn.model_validate(payload))


@settings(max_examples=150, deadline=None)
@given(
    **MATCH_SHAPES,
    stats=st.lists(COUNTS, min_size=4, max_size=4),
    ratings=st.lists(st.integers(100, 3000), min_size=4, max_size=4),
)
def test_response_text_equals_plain_json_of_the_match_view(
    ids: list[str], team: bool, winner: str, stats: list[PlayerStats], ratings: list[int], seq: int
) -> None:
    """The piecewise answer text is byte for byte json.dumps of the match view, for 1v1 and 2v2."""
    sub = _submission(ids, team, winner, stats)
    result = rate(sub.match, dict(zip(ids, ratings, strict=True)), REFERENCE_RULES)
    for _ in range(2):  # the second time the score texts come from the cache
        assert response_text(sub, seq, VERSION, result) == _plain_text(sub.body, seq, sub.played_at, result)


@settings(max_examples=400, deadline=None)
@given(
    **MATCH_SHAPES,
    stats=st.lists(SMALL_COUNTS, min_size=4, max_size=4),
    ratings=st.lists(st.integers(MIN_RATING, MAX_RATING), min_size=4, max_size=4),
    rules=st.sampled_from(RULES),
    games=st.none() | st.lists(st.integers(0, 30), min_size=4, max_size=4),
)
def test_response_text_equals_plain_json_under_every_rule_variant(
    ids: list[str],
    team: bool,
    winner: str,
    stats: list[PlayerStats],
    ratings: list[int],
    rules: Rules,
    games: list[int] | None,
    seq: int,
) -> None:
    """Under variant rules (K modes, notes, games played, clamps, caps) the text is json.dumps of the view."""
    assume(games is not None or not rules.uses_games_played)
    sub = _submission(ids, team, winner, stats)
    played = None if games is None else dict(zip(ids, games, strict=True))
    result = rate(sub.match, dict(zip(ids, ratings, strict=True)), rules, games_played=played)
    version = VersionInfo(7, f"{rules.name} \u00e9dition", rules, True, "2026-11-29T12:00:00Z")
    for _ in range(2):  # the second time the score and K texts come from the cache
        assert response_text(sub, seq, version, result) == _plain_text(
            sub.body, seq, sub.played_at, result, version
        )


@settings(max_examples=300, deadline=None)
@given(
    **MATCH_SHAPES,
    stats=st.lists(COUNTS, min_size=4, max_size=4),
    played=st.none() | st.datetimes(timezones=st.just(UTC), min_value=datetime(1, 1, 2)),
)
def test_canonical_text_equals_sorted_json_of_the_body(
    ids: list[str], team: bool, winner: str, stats: list[PlayerStats], seq: int, played: datetime | None
) -> None:
    """A submission's hand-built canonical text is json.dumps of its body with sorted keys, 1v1 and 2v2."""
    sub = _submission(ids, team, winner, stats)
    when = time_text(played)
    match = sub.match
    if team:
        players = {"team_a": list(match.team_a), "team_b": list(match.team_b)}
        keyed = {pid: match.stats_of(pid) for pid in ids}
    else:
        players = {"player_a": ids[0], "player_b": ids[1]}
        keyed = {"a": match.stats_of(ids[0]), "b": match.stats_of(ids[1])}
    body = {
        "match_id": "m-1",
        "played_at": when,
        "winner": winner,
        **players,
        "stats": {key: s.to_dict() for key, s in keyed.items()},
    }
    plain = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert Submission(match, when).body == plain
