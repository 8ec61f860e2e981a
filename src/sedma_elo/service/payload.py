"""The JSON form of a match on the wire, its validation, and its canonical text.

Two forms share one schema:

* one against one: ``player_a``, ``player_b`` and ``stats`` keyed by side ``"a"`` / ``"b"``;
* two against two: ``team_a``, ``team_b`` (two player ids each) and ``stats`` keyed by player id.

``winner`` is ``"a"``, ``"b"`` or ``"draw"`` in both. Missing statistics count as zero. The canonical
text (every field, defaults filled in, keys sorted, times in UTC) decides whether a repeated
``match_id`` carries "the same body".
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticCustomError

from ..core._jsontext import json_scalar, json_string
from ..core.ids import ID_PATTERN, MAX_ID_LENGTH, id_problem, normalize_id
from ..core.model import MAX_COUNT, NO_STATS, Match, PlayerStats, played_at_problem
from ..errors import ValidationError

__all__ = [
    "ID_PATTERN",
    "Id",
    "MatchIn",
    "StatsIn",
    "Submission",
    "canonical_body",
    "canonical_json",
    "canonical_text",
    "one_on_one_text",
    "stats_text",
    "submission_from_payload",
    "time_text",
    "valid_id",
]


def valid_id(value: str) -> str:
    """``value`` in NFC if the id rule accepts it, else a pydantic error saying why (for validators)."""
    # The one id rule (sedma_elo.core.ids), reported as a pydantic error so that the 422 names
    # the field (body.player_a, body.stats.<id>...); the pattern below only documents it.
    text = normalize_id(value)
    problem = id_problem(text)
    if problem is not None:
        raise PydanticCustomError("invalid_id", "{reason}", {"reason": problem})
    return text


def _valid_time(value: datetime) -> datetime:
    problem = played_at_problem(value)
    if problem is not None:
        raise PydanticCustomError("invalid_time", "{reason}", {"reason": problem})
    return value


#: A player id or match id: normalised to NFC, then checked by the id rule of sedma_elo.core.ids.
Id = Annotated[
    str,
    Field(min_length=1, max_length=MAX_ID_LENGTH, json_schema_extra={"pattern": ID_PATTERN}),
    AfterValidator(valid_id),
]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT, strict=True)]
PlayedAt = Annotated[AwareDatetime, AfterValidator(_valid_time)]


class StatsIn(BaseModel):
    """One player's counts in one match (each an integer from 0 to 1,000,000; missing means 0)."""

    model_config = ConfigDict(extra="forbid")

    bad_moves: Count = 0
    won_by_16: Count = 0
    won_by_24: Count = 0
    won_by_4_and_last: Count = 0


class MatchIn(BaseModel):
    """A finished match as posted to ``POST /v1/matches``.

    Give either ``player_a`` and ``player_b`` (stats keyed ``"a"``/``"b"``) or ``team_a`` and ``team_b``
    (two players each; stats keyed by player id). A draw is ``"winner": "draw"``.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "match_id": "m-1",
                    "played_at": "2026-11-29T12:00:00Z",
                    "player_a": "alice",
                    "player_b": "bob",
                    "winner": "a",
                    "stats": {
                        "a": {"bad_moves": 0, "won_by_16": 1, "won_by_24": 0, "won_by_4_and_last": 0},
                        "b": {"bad_moves": 2, "won_by_16": 0, "won_by_24": 0, "won_by_4_and_last": 0},
                    },
                },
                {
                    "match_id": "m-2",
                    "played_at": "2026-11-29T12:30:00Z",
                    "team_a": ["alice", "carol"],
                    "team_b": ["bob", "dave"],
                    "winner": "draw",
                    "stats": {"carol": {"won_by_16": 1}},
                },
            ]
        },
    )

    match_id: Id
    played_at: PlayedAt | None = None
    player_a: Id | None = None
    player_b: Id | None = None
    team_a: Annotated[list[Id], Field(min_length=2, max_length=2)] | None = None
    team_b: Annotated[list[Id], Field(min_length=2, max_length=2)] | None = None
    winner: Literal["a", "b", "draw"]
    stats: Annotated[dict[Id, StatsIn], Field(max_length=4)] = Field(default_factory=dict)


# One encoder for every call: json.dumps with options builds a new JSONEncoder each time.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(data: Any) -> str:
    """Compact JSON with sorted keys: equal data gives equal text."""
    return _CANONICAL.encode(data)


def time_text(value: datetime | None) -> str | None:
    """``value`` in UTC as ISO 8601 text (``Z``).

    Raises:
        ValidationError: ``played_at`` is outside years 1..9999 once moved to UTC.
    """
    if value is None:
        return None
    try:
        utc = value.astimezone(UTC)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+00:01 is in year 0 in UTC
        raise ValidationError("played_at", "must be within the years 1 to 9999 in UTC") from exc
    text = utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def stats_text(bad_moves: int, won_by_16: int, won_by_24: int, won_by_4_and_last: int) -> str:
    """One player's statistics as canonical JSON text (keys sorted; the counts are ints)."""
    return (
        f'{{"bad_moves":{bad_moves},"won_by_16":{won_by_16},'
        f'"won_by_24":{won_by_24},"won_by_4_and_last":{won_by_4_and_last}}}'
    )


def one_on_one_text(
    match_id: str, played_at: str, player_a: str, player_b: str, stats_a: str, stats_b: str, winner: str
) -> str:
    """The canonical text of a one-against-one body from its parts, each already JSON text (the one
    layout of that body: POST's :func:`canonical_text` and the import's ``canonical_texts``)."""
    return (
        f'{{"match_id":{match_id},"played_at":{played_at},"player_a":{player_a},'
        f'"player_b":{player_b},"stats":{{"a":{stats_a},"b":{stats_b}}},"winner":{winner}}}'
    )


def _stats_text(s: PlayerStats) -> str:
    return stats_text(s.bad_moves, s.won_by_16, s.won_by_24, s.won_by_4_and_last)


def canonical_text(match: Match, played_at: str | None) -> str:
    """``canonical_json(canonical_body(match, played_at))``, formatted directly (every write builds it).

    The keys in sorted order at every level, as ``canonical_json`` sorts them; equal byte for byte
    (a hypothesis test in tests/service/test_payload_ids.py).
    """
    winner = json_string(match.winner)
    if len(match.team_a) == 1:
        a, b = match.team_a[0], match.team_b[0]
        return one_on_one_text(
            json_scalar(match.match_id),
            json_scalar(played_at),
            json_string(a),
            json_string(b),
            _stats_text(match.stats_of(a)),
            _stats_text(match.stats_of(b)),
            winner,
        )
    head = f'{{"match_id":{json_scalar(match.match_id)},"played_at":{json_scalar(played_at)},'
    stats = ",".join(f"{json_string(p)}:{_stats_text(match.stats_of(p))}" for p in sorted(match.players))
    return (
        f'{head}"stats":{{{stats}}},"team_a":[{",".join(map(json_string, match.team_a))}],'
        f'"team_b":[{",".join(map(json_string, match.team_b))}],"winner":{winner}}}'
    )


class Submission:
    """A validated match ready for the ledger: the engine's :class:`Match` plus its canonical text.

    ``minimal``: its answer is to be the summary (``Prefer: return=minimal``, see
    :func:`~sedma_elo.service.ledger.views.summary_view`), not the full explained answer. It is how
    the client asks, not part of the match: the body and its hash do not hold it.
    """

    __slots__ = ("body", "body_hash", "match", "minimal", "played_at")

    def __init__(self, match: Match, played_at: str | None, *, minimal: bool = False) -> None:
        self.match = match
        self.body = canonical_text(match, played_at)
        self.body_hash = hashlib.sha256(self.body.encode()).hexdigest()
        self.played_at = played_at
        self.minimal = minimal

    @property
    def match_id(self) -> str:
        """The match's id (always set for a submission)."""
        assert self.match.match_id is not None
        return self.match.match_id


#: Checked statistics by their counts: most bodies repeat a few small counts, and building a
#: (frozen, checked) PlayerStats cost about 6 µs of every write's event-loop time. Bounded.
_STATS: dict[tuple[int, int, int, int], PlayerStats] = {}
_STATS_SIZE = 4096


def _stats(raw: StatsIn | None) -> PlayerStats:
    if raw is None:
        return NO_STATS
    key = (raw.bad_moves, raw.won_by_16, raw.won_by_24, raw.won_by_4_and_last)
    found = _STATS.get(key)
    if found is None:
        if len(_STATS) >= _STATS_SIZE:
            _STATS.clear()
        found = _STATS[key] = PlayerStats(*key)
    return found


def submission_from_payload(payload: MatchIn) -> Submission:
    """Check the fields that depend on each other and build the :class:`Submission`.

    Raises:
        ValidationError: both or neither form given, stats for someone not in the match, a player
            against themself (the field is named, e.g. ``player_b`` or ``stats.zoe``).
    """
    played_at = time_text(payload.played_at)
    single = payload.player_a is not None or payload.player_b is not None
    team = payload.team_a is not None or payload.team_b is not None
    if single and team:
        raise ValidationError("team_a", "give either player_a/player_b or team_a/team_b, not both")
    if single:
        if payload.player_a is None:
            raise ValidationError("player_a", "is required")
        if payload.player_b is None:
            raise ValidationError("player_b", "is required")
        for key in payload.stats:
            if key not in ("a", "b"):
                raise ValidationError(f"stats.{key}", "one-against-one stats are keyed by side 'a' or 'b'")
        sa, sb = _stats(payload.stats.get("a")), _stats(payload.stats.get("b"))
        match = Match.single(
            payload.player_a, payload.player_b, payload.winner, sa, sb, match_id=payload.match_id
        )
        return Submission(match, played_at)
    if payload.team_a is None:
        raise ValidationError("team_a", "is required (or give player_a and player_b)")
    if payload.team_b is None:
        raise ValidationError("team_b", "is required")
    everyone = [*payload.team_a, *payload.team_b]
    for key in payload.stats:
        if key not in everyone:
            raise ValidationError(f"stats.{key}", "is not a player of this match")
    stats = {pid: _stats(payload.stats.get(pid)) for pid in everyone}
    match = Match(tuple(payload.team_a), tuple(payload.team_b), payload.winner, stats, payload.match_id)
    return Submission(match, played_at)


def canonical_body(match: Match, played_at: str | None) -> dict[str, Any]:
    """The body of a validated match with every field filled in (its :func:`canonical_json` is the
    canonical text): what a submission stores and what the ledger's stored facts decode back to."""
    if len(match.team_a) == 1:
        a, b = match.team_a[0], match.team_b[0]
        return {
            "match_id": match.match_id,
            "played_at": played_at,
            "player_a": a,
            "player_b": b,
            "winner": match.winner,
            "stats": {"a": match.stats_of(a).to_dict(), "b": match.stats_of(b).to_dict()},
        }
    return {
        "match_id": match.match_id,
        "played_at": played_at,
        "team_a": list(match.team_a),
        "team_b": list(match.team_b),
        "winner": match.winner,
        "stats": {pid: match.stats_of(pid).to_dict() for pid in match.players},
    }


def submission_from_match(match: Match, played_at: datetime | None = None) -> Submission:
    """The :class:`Submission` of an engine :class:`Match` (used by the importer).

    Raises:
        ValidationError: no ``match_id``, or a value the API would refuse (the field is named).
    """
    if match.match_id is None:
        raise ValidationError("match_id", "is required")
    when = played_at if played_at is not None else match.played_at
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return submission_from_payload(_payload_of(match, when))
    except PydanticValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise ValidationError(".".join(map(str, first["loc"])) or "match", first["msg"]) from None


def _payload_of(match: Match, when: datetime | None) -> MatchIn:
    assert match.match_id is not None
    if len(match.team_a) == 1:
        payload = MatchIn(
            match_id=match.match_id,
            played_at=when,
            player_a=match.team_a[0],
            player_b=match.team_b[0],
            winner=match.winner,
            stats={
                "a": StatsIn(**match.stats_of(match.team_a[0]).to_dict()),
                "b": StatsIn(**match.stats_of(match.team_b[0]).to_dict()),
            },
        )
    else:
        payload = MatchIn(
            match_id=match.match_id,
            played_at=when,
            team_a=list(match.team_a),
            team_b=list(match.team_b),
            winner=match.winner,
            stats={pid: StatsIn(**match.stats_of(pid).to_dict()) for pid in match.players},
        )
    return payload


def match_from_body(body: str) -> Match:
    """Rebuild the engine :class:`Match` from a stored canonical body."""
    return submission_from_payload(MatchIn.model_validate_json(body)).match
