"""The match JSON form: parsing, round trip and field-named errors."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo import Match, PlayerStats, ValidationError
from sedma_elo.core.matchjson import (
    match_from_json,
    match_to_json,
    parse_json_text,
    rate_request_from_json,
    rate_request_to_json,
)


def _single(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "match_id": "m-1",
        "played_at": "2026-03-01T18:30:00+00:00",
        "player_a": "alice",
        "player_b": "bob",
        "winner": "a",
        "stats": {"a": {"won_by_16": 1}, "b": {"bad_moves": 2}},
    }
    data.update(changes)
    return data


def _team(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "team_a": ["alice", "carol"],
        "team_b": ["bob", "dave"],
        "winner": "draw",
        "stats": {"alice": {"won_by_24": 1}, "dave": {"bad_moves": 3}},
    }
    data.update(changes)
    return data


def test_single_match_is_parsed() -> None:
    """The service's one-against-one form becomes the equal Match."""
    expected = Match.single(
        "alice",
        "bob",
        "a",
        PlayerStats(won_by_16=1),
        PlayerStats(bad_moves=2),
        match_id="m-1",
        played_at=datetime(2026, 3, 1, 18, 30, tzinfo=UTC),
    )
    assert match_from_json(_single()) == expected


def test_team_match_is_parsed() -> None:
    """team_a/team_b with stats keyed by player id become a two-against-two Match."""
    match = match_from_json(_team())
    assert match.team_a == ("alice", "carol")
    assert match.team_b == ("bob", "dave")
    assert match.winner == "draw"
    assert match.stats_of("alice") == PlayerStats(won_by_24=1)
    assert match.stats_of("dave") == PlayerStats(bad_moves=3)
    assert match.stats_of("carol") == PlayerStats()


def test_optional_fields_may_be_left_out() -> None:
    """Only the players and the winner are required; missing counts are 0."""
    match = match_from_json({"player_a": "alice", "player_b": "bob", "winner": "b"})
    assert match.match_id is None
    assert match.played_at is None
    assert match.stats_of("alice") == PlayerStats()


def test_plain_date_is_midnight() -> None:
    """played_at may be a plain ISO date."""
    assert match_from_json(_single(played_at="2026-03-01")).played_at == datetime(2026, 3, 1)


#: Ids the id rule accepts: no control, format or separator character, no "/", not blank at the edges.
ids = (
    st.text(
        st.characters(
            codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp"), exclude_characters="/"
        ),
        min_size=1,
        max_size=10,
    )
    .map(lambda s: unicodedata.normalize("NFC", s.strip()))
    .filter(bool)
)
counts = st.integers(0, 1_000_000)
stats_objects = st.builds(PlayerStats, counts, counts, counts, counts)


@given(st.lists(ids, min_size=4, max_size=4, unique=True), st.sampled_from(["a", "b", "draw"]), st.data())
def test_round_trip(players: list[str], winner: str, data: st.DataObject) -> None:
    """match_to_json then match_from_json gives back an equal match, single or team."""
    size = data.draw(st.sampled_from([1, 2]))
    team_a, team_b = tuple(players[:size]), tuple(players[2 : 2 + size])
    stats = {p: data.draw(stats_objects) for p in team_a + team_b}
    match = Match(team_a, team_b, winner, stats, data.draw(st.none() | ids))  # type: ignore[arg-type]
    assert match_from_json(match_to_json(match)) == match


def test_rate_request_round_trip() -> None:
    """A rate request carries the ratings next to the match."""
    match = match_from_json(_single())
    request = rate_request_to_json(match, {"alice": 1000, "bob": 1100, "zoe": 3})
    assert request["ratings"] == {"alice": 1000, "bob": 1100}
    assert rate_request_from_json(request) == (match, {"alice": 1000, "bob": 1100})


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (_single(stats={"a": {"bad_moves": -1}}), "stats.a.bad_moves"),
        (_single(stats={"b": {"won_by_16": 1.0}}), "stats.b.won_by_16"),
        (_single(stats={"b": {"won_by_24": True}}), "stats.b.won_by_24"),
        (_single(stats={"a": {"won_by_4_and_last": "2"}}), "stats.a.won_by_4_and_last"),
        (_single(stats={"a": {"jokers": 1}}), "stats.a.jokers"),
        (_single(stats={"c": {}}), "stats.c"),
        (_single(stats=[1, 2]), "stats"),
        (_single(stats={"a": 3}), "stats.a"),
        (_team(stats={"carol": {"bad_moves": -2}}), "stats.carol.bad_moves"),
        (_team(stats={"a": {}}), "stats.a"),
        (_team(stats={"zoe": {}}), "stats.zoe"),
        (_team(stats={"bob": []}), "stats.bob"),
        (_single(winner="A"), "winner"),
        (_single(winner=None), "winner"),
        (_single(player_a=""), "player_a"),
        (_single(player_b=5), "player_b"),
        (_single(player_b="alice"), "player_b"),
        (_team(team_a=["alice", ""]), "team_a[1]"),
        (_team(team_b=["bob", "bob"], stats={}), "team_b"),
        (_team(team_b=["carol", "dave"]), "team_b"),
        (_team(team_a="alice"), "team_a"),
        (_team(team_a=["a", "b", "c"]), "team_a"),
        (_single(team_a=["x", "y"]), "team_a"),
        (_single(match_id=""), "match_id"),
        (_single(played_at="yesterday"), "played_at"),
        (_single(played_at=20260301), "played_at"),
        (_single(score=3), "score"),
        ({"player_b": "bob", "winner": "a"}, "player_a"),
        ([1, 2], "(root)"),
    ],
)
def test_bad_field_is_named(data: object, field: str) -> None:
    """Every bad or unknown value raises ValidationError whose field is its JSON path."""
    with pytest.raises(ValidationError, match="^" + re.escape(field) + ": ") as info:
        match_from_json(data)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("ratings", "field"),
    [({"alice": 1000.0}, "ratings.alice"), ({"bob": 10**9}, "ratings.bob"), ({"zoe": 1}, "ratings.zoe")],
)
def test_bad_rating_is_named(ratings: dict[str, object], field: str) -> None:
    """Ratings in a rate request are integers in range, for players of the match."""
    with pytest.raises(ValidationError, match="^" + re.escape(field) + ": "):
        rate_request_from_json(_single(ratings=ratings))


def test_ratings_are_refused_in_a_plain_match() -> None:
    """match_from_json knows no 'ratings' field (only a rate request has it)."""
    with pytest.raises(ValidationError, match=r"^ratings: unknown field"):
        match_from_json(_single(ratings={}))


def test_invalid_json_names_the_line() -> None:
    """A JSON syntax error is a ValidationError with its line."""
    with pytest.raises(ValidationError, match=r"^line 2: \(json\): not valid JSON") as info:
        parse_json_text('{"player_a": "alice",\n oops}')
    assert info.value.line == 2
