"""Bad inputs to Match, PlayerStats and rate(): each is a ValidationError naming the field."""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime, timedelta, timezone

import pytest

from sedma_elo import MAX_COUNT, MAX_RATING, MIN_RATING, Match, PlayerStats, ValidationError, rate

STAT_FIELDS = ("bad_moves", "won_by_16", "won_by_24", "won_by_4_and_last")


def _raises(field: str) -> pytest.RaisesContext[ValidationError]:
    return pytest.raises(ValidationError, match="^" + re.escape(field) + ": ")


def test_errors_are_value_errors() -> None:
    """ValidationError is a ValueError, so callers that catch ValueError keep working."""
    assert issubclass(ValidationError, ValueError)


@pytest.mark.parametrize("field", STAT_FIELDS)
@pytest.mark.parametrize("value", [-1, True, False, 1.0, 2.5, "3", None, MAX_COUNT + 1])
def test_count_must_be_a_non_negative_integer(field: str, value: object) -> None:
    """Counts refuse negatives, bools, floats (even whole ones), strings, None and huge values."""
    with _raises(field) as info:
        PlayerStats(**{field: value})  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize("field", STAT_FIELDS)
def test_count_limits_are_accepted(field: str) -> None:
    """0 and MAX_COUNT are valid counts."""
    assert getattr(PlayerStats(**{field: MAX_COUNT}), field) == MAX_COUNT
    assert getattr(PlayerStats(**{field: 0}), field) == 0


@pytest.mark.parametrize(
    "value", [1000.0, math.inf, -math.inf, math.nan, True, "1000", None, MIN_RATING - 1, MAX_RATING + 1]
)
def test_rating_must_be_a_finite_integer_in_range(value: object) -> None:
    """rate() refuses ratings that are not ints in [MIN_RATING, MAX_RATING], naming the player."""
    match = Match.single("alice", "bob", "a")
    with _raises("ratings.bob"):
        rate(match, {"alice": 1000, "bob": value})  # type: ignore[dict-item]


def test_rating_range_limits_are_accepted() -> None:
    """The documented range is inclusive at both ends."""
    result = rate(Match.single("alice", "bob", "a"), {"alice": MIN_RATING, "bob": MAX_RATING})
    assert result["alice"].rating_before == MIN_RATING


@pytest.mark.parametrize("pid", ["", "   ", 7, None, "x" * 129])
def test_player_id_must_be_a_non_empty_string(pid: object) -> None:
    """Player ids are non-empty strings of at most 128 characters."""
    with _raises("player_a"):
        Match.single(pid, "bob", "a")  # type: ignore[arg-type]


def test_team_player_id_error_names_the_position() -> None:
    """In a team the error names team_b[1]."""
    with _raises("team_b[1]"):
        Match(("a1", "a2"), ("b1", ""), "a", {})


def test_player_cannot_play_themself() -> None:
    """A one-against-one match needs two different players."""
    with _raises("player_b"):
        Match.single("alice", "alice", "a")


@pytest.mark.parametrize(
    ("team_a", "team_b"),
    [
        (("alice", "alice"), ("bob", "carol")),
        (("alice", "bob"), ("carol", "carol")),
        (("alice", "bob"), ("bob", "c")),
    ],
)
def test_team_has_no_duplicate_player(team_a: tuple[str, ...], team_b: tuple[str, ...]) -> None:
    """No player appears twice in a team match, within a team or across the two."""
    with _raises("team_b"):
        Match(team_a, team_b, "a", {})


def test_teams_must_be_of_equal_size() -> None:
    """One against two is refused."""
    with _raises("team_b"):
        Match(("alice",), ("bob", "carol"), "a", {})


@pytest.mark.parametrize("winner", ["A", "c", "", None, 1, True, "tie"])
def test_winner_is_one_of_the_allowed_values(winner: object) -> None:
    """winner must be 'a', 'b' or 'draw'."""
    with _raises("winner"):
        Match.single("alice", "bob", winner)  # type: ignore[arg-type]


def test_stats_of_a_stranger_are_refused() -> None:
    """Statistics for someone who did not play are refused, naming them."""
    with _raises("stats.zoe"):
        Match(("alice",), ("bob",), "a", {"zoe": PlayerStats()})


def test_missing_stats_are_zero() -> None:
    """A player without statistics has all counts 0."""
    assert Match.single("alice", "bob", "a").stats_of("bob") == PlayerStats()


def test_nfd_and_nfc_spellings_are_one_player() -> None:
    """'José' in NFD against 'José' in NFC is one player against themself, not two players."""
    with _raises("player_b") as info:
        Match.single("Jose\u0301", "Jos\u00e9", "a")
    assert "against themself" in str(info.value)


def test_match_ids_and_stats_keys_are_normalised_to_nfc() -> None:
    """The match holds NFC ids; stats keyed by the NFD spelling belong to the NFC player."""
    match = Match(("Jose\u0301",), ("bob",), "a", {"Jose\u0301": PlayerStats(won_by_16=1)}, "r\u00e9-1\u0301")
    assert match.team_a == ("Jos\u00e9",)
    assert match.stats_of("Jos\u00e9") == PlayerStats(won_by_16=1)
    assert match.match_id == unicodedata.normalize("NFC", "r\u00e9-1\u0301")


@pytest.mark.parametrize("pid", ["team/alice", "ali\u202ece", "ali\u0085ce", "\ufeffalice", " alice"])
def test_match_refuses_what_the_id_rule_refuses(pid: str) -> None:
    """The engine's Match applies the one id rule: '/', controls, format characters, edge blanks."""
    with _raises("player_a"):
        Match.single(pid, "bob", "a")


def test_aware_time_without_a_utc_equivalent_is_refused() -> None:
    """A played_at whose UTC time falls before year 1 is refused, naming played_at."""
    early = datetime(1, 1, 1, tzinfo=timezone(timedelta(minutes=1)))
    with _raises("played_at"):
        Match.single("alice", "bob", "a", played_at=early)
