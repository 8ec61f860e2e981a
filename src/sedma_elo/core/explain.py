"""Explaining a rating change: a JSON-able breakdown and plain-words sentences per player.

:func:`result_to_dict` is the explanation object that ``sedma-elo rate --json`` prints and the HTTP
service returns. Its field names are stable (new fields may be added, none renamed)::

    {
      "rules": "reference@1.0",              # label of the rules used (name@version)
      "match": {...},                        # the match in the JSON form of sedma_elo.core.matchjson
      "new_ratings": {"alice": 1026, ...},   # rating after the match by player id
      "players": [                           # one object per player, side a first
        {
          "player_id": "alice", "side": "a",
          "outcome": "win",                  # "win", "loss" or "draw"
          "teammates": [], "opponents": ["bob"],
          "rating_before": 1000,
          "k": 40, "k_reason": "rating 1000 is below 1200",
          "team_rating": 1000.0,             # own side's rating (the player's own in 1-vs-1)
          "opponent_rating": 1100.0,         # the other side's rating
          "expected": 0.359935...,           # Elo expected score, in (0, 1)
          "score": {
            "base": 1.0,                     # 1 win, 0.5 draw, 0 loss
            "bonuses": {                     # keyed by kind; value = min(count * per_round, cap)
              "won_by_16": {"count": 3, "per_round": 0.05, "cap": 0.15,
                            "uncapped": 0.15, "value": 0.15, "capped": false},
              "won_by_24": {...}, "won_by_4_and_last": {...}
            },
            "bonus_total": 0.15,             # sum of the three values
            "bonus_scale": 1.0,              # share kept: 1 on a win, loser/draw scale otherwise
            "bonus_scaled": 0.15,            # bonus_total * bonus_scale
            "malus": {"count": 2, "per_bad_move": 0.02, "cap": 0.3,
                      "uncapped": 0.04, "value": 0.04, "capped": false},
            "unclamped": 1.11,               # base + bonus_scaled - malus.value
            "adjusted": 1.0,                 # unclamped clamped to [score.min, score.max]
            "clamp": "max",                  # "none", "min" (raised to the minimum) or "max"
            "clamp_cut": 0.11,               # unclamped - adjusted (negative when raised)
            "bonus_erased": 0.11,            # part of bonus_scaled the clamp took away
            "malus_erased": 0.0              # part of the malus the clamp gave back
          },
          "change": 25.6025...,              # k * (adjusted - expected), not rounded
          "rating_after": 1026, "delta": 26,
          "games_played": null,              # games before the match, when given to rate()
          "notes": [],                       # one sentence per rule variant that acted
          "explanation": ["alice won against bob, ...", ...]  # explain_player(), English
        }
      ]
    }

Under float32 rules (the reference) the ``score`` values are single-precision numbers; they are
written with the fewest digits that identify that single-precision value (``0.05``, not
``0.05000000074505806``). Every other number is the exact double.

:func:`change_to_json` is one player's object as compact JSON text, for the service's write path.

:func:`explain_player` gives the sentences, in the third person (``"alice won ..."``) or, with
``second_person=True``, addressed to the player (``"You won ..."``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from ._jsontext import json_scalar, json_string
from .engine import BonusTerm, MalusTerm, PlayerChange, RatingResult, ScoreBreakdown
from .formula import f32
from .matchjson import match_to_json
from .sentences import (
    ENGLISH,
    Translator,
    change_sentence,
    change_sentences,
    erased,
    headline,
    k_sentence,
    note_sentence,
    score_lines,
)

__all__ = [
    "Translator",
    "change_from_dict",
    "change_to_dict",
    "change_to_json",
    "explain_change",
    "explain_player",
    "explain_result",
    "result_to_dict",
]


# ---------------------------------------------------------------------------- JSON form
def result_to_dict(result: RatingResult) -> dict[str, Any]:
    """The whole explanation of ``result`` as JSON-able data (see the module docstring)."""
    return {
        "rules": result.rules_label,
        "match": match_to_json(result.match),
        "new_ratings": result.new_ratings,
        "players": [change_to_dict(result, c.player_id) for c in result.changes],
    }


def change_to_dict(result: RatingResult, player_id: str) -> dict[str, Any]:
    """The explanation object of one player of ``result`` (one entry of ``players``).

    Raises:
        KeyError: ``player_id`` did not play in the match.
    """
    change = result[player_id]
    own, other = _sides(result, change)
    return {
        "player_id": change.player_id,
        "side": change.side,
        "outcome": change.score.outcome,
        "teammates": [p for p in own if p != change.player_id],
        "opponents": list(other),
        "rating_before": change.rating_before,
        "k": change.k,
        "k_reason": change.k_reason,
        "team_rating": change.team_rating,
        "opponent_rating": change.opponent_rating,
        "expected": change.expected,
        "score": _score_to_dict(change.score),
        "change": change.change,
        "rating_after": change.rating_after,
        "delta": change.delta,
        # Rule variants (rate(games_played=...), docs/rules.md) add these to PlayerChange.
        "games_played": getattr(change, "games_played", None),
        "notes": list(getattr(change, "notes", ())),
        "explanation": explain_player(result, player_id),
    }


def change_to_json(result: RatingResult, player_id: str) -> str:
    """``change_to_dict(result, player_id)`` as compact JSON text, built without the dict.

    Byte for byte ``json.dumps(change_to_dict(result, player_id), separators=(",", ":"),
    ensure_ascii=False)``, several times faster: what depends only on the score breakdown (its
    object, its sentences) or on K (its reason, its sentence) is encoded once and cached, the rest
    is formatted straight into the text.

    Raises:
        KeyError: ``player_id`` did not play in the match.
    """
    change = result[player_id]
    own, other = _sides(result, change)
    mates = [p for p in own if p != player_id]
    score = _score_texts(change.score)
    k_text, reason_text, k_line = _k_texts(change.k, change.k_reason)
    name = json_string(player_id)
    explanation = [
        json_string(headline(change, player_id, mates, other)),
        k_line,
        name[1:-1].join(score.sentences),
        json_string(change_sentence(change)),
        *(json_string(note_sentence(note)) for note in change.notes),
    ]
    # The keys in change_to_dict's order.
    return (
        f'{{"player_id":{name},"side":{json_string(change.side)},"outcome":{score.outcome},'
        f'"teammates":{_string_list(mates)},"opponents":{_string_list(other)},'
        f'"rating_before":{json_scalar(change.rating_before)},"k":{k_text},"k_reason":{reason_text},'
        f'"team_rating":{json_scalar(change.team_rating)},'
        f'"opponent_rating":{json_scalar(change.opponent_rating)},'
        f'"expected":{json_scalar(change.expected)},"score":{score.json},'
        f'"change":{json_scalar(change.change)},"rating_after":{json_scalar(change.rating_after)},'
        f'"delta":{json_scalar(change.delta)},"games_played":{json_scalar(change.games_played)},'
        f'"notes":{_string_list(change.notes)},"explanation":[{",".join(explanation)}]}}'
    )


def _string_list(items: Sequence[str]) -> str:
    if not items:  # the common case: no teammates, no notes
        return "[]"
    return f"[{','.join(map(json_string, items))}]"


class _ScoreTexts(NamedTuple):
    """The JSON texts of one score breakdown, for :func:`change_to_json`."""

    score: ScoreBreakdown  # held so that its id, the cache key, is not reused while cached
    outcome: str  # the outcome as a JSON string
    json: str  # the score object
    sentences: tuple[str, ...]  # the score sentences as JSON strings joined by ",", cut where the name goes


#: Stands for the player's name while a score's sentences are encoded: a control character, which
#: the fixed words and numbers of those sentences never contain.
_NAME = "\x00"
_NAME_JSON = json_string(_NAME)[1:-1]
_SCORE_TEXTS: dict[int, _ScoreTexts] = {}  # by id: rate() hands out one breakdown per outcome and counts
_K_TEXTS: dict[tuple[str, float, type], tuple[str, str, str]] = {}


def _score_texts(s: ScoreBreakdown) -> _ScoreTexts:
    """The cached JSON texts of ``s`` (identity-keyed: hashing a breakdown costs more than encoding)."""
    found = _SCORE_TEXTS.get(id(s))
    if found is None or found.score is not s:
        lines = ",".join(map(json_string, score_lines(s, _NAME)))
        score_json = json.dumps(_score_to_dict(s), separators=(",", ":"), ensure_ascii=False)
        texts = _ScoreTexts(s, json_string(s.outcome), score_json, tuple(lines.split(_NAME_JSON)))
        found = _remember(_SCORE_TEXTS, id(s), texts)
    return found


def _k_texts(k: float, reason: str) -> tuple[str, str, str]:
    """(``k``, ``reason``, the K sentence) as JSON texts; cached, as a few reasons recur."""
    key = (reason, k, type(k))  # the type too: 40 and 40.0 are equal keys but read differently
    found = _K_TEXTS.get(key)
    if found is None:
        texts = (json_scalar(k), json_string(reason), json_string(k_sentence(k, reason)))
        found = _remember(_K_TEXTS, key, texts)
    return found


def _score_to_dict(s: ScoreBreakdown) -> dict[str, Any]:
    bonus_erased, malus_erased = erased(s)
    return {
        "base": _num(s.base),
        "bonuses": {t.kind: _bonus_to_dict(t) for t in s.bonuses},
        "bonus_total": _num(s.bonus_total),
        "bonus_scale": _num(s.bonus_scale),
        "bonus_scaled": _num(s.bonus_scaled),
        "malus": {
            "count": s.malus.count,
            "per_bad_move": _num(s.malus.per_bad_move),
            "cap": _num(s.malus.cap),
            "uncapped": _num(s.malus.uncapped),
            "value": _num(s.malus.value),
            "capped": s.malus.capped,
        },
        "unclamped": _num(s.unclamped),
        "adjusted": _num(s.adjusted),
        "clamp": s.clamp,
        "clamp_cut": _num(s.clamp_cut),
        "bonus_erased": _num(bonus_erased),
        "malus_erased": _num(malus_erased),
    }


def _bonus_to_dict(t: BonusTerm) -> dict[str, Any]:
    return {
        "count": t.count,
        "per_round": _num(t.per_round),
        "cap": _num(t.cap),
        "uncapped": _num(t.uncapped),
        "value": _num(t.value),
        "capped": t.capped,
    }


def _num(x: float) -> float:
    """``x`` itself, or for a single-precision value the shortest decimal that reads back to it."""
    found = _SHORT.get(x)
    if found is None:
        found = _remember(_SHORT, x, _shortest_single(x))
    return found


_SHORT: dict[float, float] = {}  # score values repeat a lot: the same counts under the same rules
_K = TypeVar("_K")
_V = TypeVar("_V")


def _remember(cache: dict[_K, _V], key: _K, value: _V) -> _V:
    """Store ``value`` under ``key`` and return it; a full cache (4,096 entries) is emptied first."""
    if len(cache) >= 4096:
        cache.clear()
    cache[key] = value
    return value


def _shortest_single(x: float) -> float:
    if not math.isfinite(x) or f32(x) != x:
        return x
    for digits in range(1, 10):
        short = float(f"{x:.{digits}g}")
        if f32(short) == x:
            return short
    return x  # 9 significant digits always identify a single; kept for the type checker


def _sides(result: RatingResult, change: PlayerChange) -> tuple[tuple[str, ...], tuple[str, ...]]:
    m = result.match
    return (m.team_a, m.team_b) if change.side == "a" else (m.team_b, m.team_a)


def change_from_dict(data: Mapping[str, Any]) -> tuple[PlayerChange, list[str], list[str]]:
    """(the change, teammates, opponents) of one explanation object of ``change_to_dict``.

    The sentences built from it equal those of the original change (the JSON keeps every value
    they print). Raises ``KeyError`` or ``TypeError`` for an object of another shape.
    """
    s = data["score"]
    bonuses = s["bonuses"]
    if isinstance(bonuses, Mapping):
        bonuses = [{"kind": kind, **term} for kind, term in bonuses.items()]
    terms = tuple(
        BonusTerm(b["kind"], b["count"], b["per_round"], b["cap"], _uncapped(b, "per_round"), b["value"])
        for b in bonuses
    )
    m = s["malus"]
    malus = MalusTerm(m["count"], m["per_bad_move"], m["cap"], _uncapped(m, "per_bad_move"), m["value"])
    score = ScoreBreakdown(
        s.get("outcome", data.get("outcome")),
        s["base"],
        terms,  # type: ignore[arg-type]  # three kinds in the JSON form
        s["bonus_total"],
        s["bonus_scale"],
        s["bonus_scaled"],
        malus,
        s["unclamped"],
        s["adjusted"],
        s["clamp"],
    )
    change = PlayerChange(
        data["player_id"],
        data["side"],
        data["rating_before"],
        data["k"],
        data["k_reason"],
        data["team_rating"],
        data["opponent_rating"],
        data["expected"],
        score,
        data["change"],
        data["rating_after"],
        data.get("games_played"),
        tuple(data.get("notes") or ()),
    )
    return change, list(data.get("teammates") or []), list(data.get("opponents") or [])


def _uncapped(term: Mapping[str, Any], rate: str) -> float:
    found = term.get("uncapped")
    return float(term["count"] * term[rate]) if found is None else float(found)


# ---------------------------------------------------------------------------- sentences
def explain_result(
    result: RatingResult, *, second_person: bool = False, translator: Translator = ENGLISH
) -> dict[str, list[str]]:
    """The sentences of every player of ``result`` by player id (side a first)."""
    return {
        c.player_id: explain_player(result, c.player_id, second_person=second_person, translator=translator)
        for c in result.changes
    }


def explain_player(
    result: RatingResult, player_id: str, *, second_person: bool = False, translator: Translator = ENGLISH
) -> list[str]:
    """Plain-words sentences saying how ``player_id``'s rating changed and why.

    The first sentence gives the outcome, the expectation and the change; the others give K, each
    bonus and the malus (with their caps), the share of the bonus a loser or a drawing player
    keeps, the adjusted score and what the clamp removed, and the rounding. Numbers are rounded
    for reading; :func:`change_to_dict` has the exact values. ``translator`` (a gettext catalog,
    e.g. ``sedma_elo.i18n.translations("de")``) gives the language; English by default.

    Raises:
        KeyError: ``player_id`` did not play in the match.
    """
    change = result[player_id]
    own, other = _sides(result, change)
    mates = [p for p in own if p != player_id]
    return change_sentences(change, mates, other, second_person=second_person, translator=translator)


def explain_change(
    data: Mapping[str, Any], *, second_person: bool = False, translator: Translator = ENGLISH
) -> list[str]:
    """The sentences of one explanation object of :func:`change_to_dict`, in ``translator``'s language.

    For readers that hold the JSON form only (the service's answers): equal to the ``explanation``
    the object was made with when ``translator`` is English.

    Raises:
        KeyError, TypeError: ``data`` is not an explanation object.
    """
    change, mates, other = change_from_dict(data)
    score = data["score"]
    cleared = (score["bonus_erased"], score["malus_erased"]) if "bonus_erased" in score else None
    return change_sentences(
        change, mates, other, second_person=second_person, translator=translator, cleared=cleared
    )
