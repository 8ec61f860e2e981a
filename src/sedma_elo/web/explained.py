"""A match's explanation shaped for the match page: cards winner first, sentences in the reader's
language, and what the change would have been without the clamp or without the malus.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from typing import Any

from ..core.engine import rate
from ..core.explain import explain_change
from ..core.matchjson import match_from_json
from ..core.rules import Rules
from ..core.sentences import ENGLISH, Translator, k_reason_text
from ..errors import SedmaEloError

__all__ = ["changes_of", "normalized", "what_if", "winner_first"]

#: The widest score range rules accept: wide enough that no cap-respecting score is clamped.
_NO_CLAMP = {"score_min": -1.0, "score_max": 2.0}


def changes_of(view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The per-player explanation objects of a match answer (``changes``, or ``players``)."""
    for key in ("changes", "players"):
        found = view.get(key)
        if isinstance(found, list):
            return found
    nested = view.get("explanation")
    if isinstance(nested, Mapping):
        return changes_of(nested)
    return []


def normalized(change: Mapping[str, Any], translator: Translator | None = None) -> dict[str, Any]:
    """One player's explanation in the form the template reads.

    Accepts both forms of the explanation object (bonuses as a list or keyed by kind; the outcome
    inside ``score`` or beside it; sentences as ``explanation``, ``sentences`` or one ``sentence``) and
    fills in each term's ``uncapped`` value (count times rate, before the cap) where it is missing.
    With a ``translator`` the sentences of a full explanation object are rebuilt in its language.
    """
    score = dict(change["score"])
    raw_bonuses = score["bonuses"]
    if isinstance(raw_bonuses, Mapping):
        raw_bonuses = [{"kind": kind, **term} for kind, term in raw_bonuses.items()]
    score["bonuses"] = [{"uncapped": t["count"] * t["per_round"], **t} for t in raw_bonuses]
    malus = score["malus"]
    score["malus"] = {"uncapped": malus["count"] * malus["per_bad_move"], **malus}
    score.setdefault("outcome", change.get("outcome"))
    sentences = change.get("explanation", change.get("sentences"))
    if not isinstance(sentences, list):
        sentences = [change["sentence"]] if change.get("sentence") else []
    from_explain = isinstance(change.get("explanation"), list)
    if from_explain and translator is not None:
        # An object of another shape keeps the sentences it came with.
        with suppress(KeyError, TypeError):
            sentences = explain_change(change, translator=translator)
    delta = change.get("delta", change["rating_after"] - change["rating_before"])
    return {
        **change,
        "k_reason_text": k_reason_text(str(change.get("k_reason", "")), translator or ENGLISH),
        "score": score,
        "sentences": [str(x) for x in sentences],
        "delta": delta,
        "from_explain": from_explain,
    }


def winner_first(changes: list[Mapping[str, Any]], winner: str | None) -> list[Mapping[str, Any]]:
    """The changes with the winning side's players first (the order kept within a side)."""
    if winner not in ("a", "b"):
        return list(changes)
    return sorted(changes, key=lambda c: 0 if c.get("side") == winner else 1)


def what_if(
    body: Mapping[str, Any], changes: list[Mapping[str, Any]], rules: Rules
) -> dict[str, dict[str, int]]:
    """By player: the rating change the match would have given ``{"clamp": d, "malus": d}`` without
    the clamp of the score (only where it acted) and without the bad-move malus (only where there
    was one), re-rated by the core from the ratings before the match.

    Empty when the rules' variants (K by games played, zero-sum, margin) acted: a re-rating would need
    more than the ratings before the match.
    """
    variants = (
        rules.uses_games_played
        or rules.zero_sum
        or rules.zero_sum_established
        or rules.zero_sum_newcomers
        or rules.uses_margin
    )
    if variants or not changes:
        return {}
    try:
        match = match_from_json(dict(body))
        before = {c["player_id"]: c["rating_before"] for c in changes}
        free = rate(match, before, rules.replace(**_NO_CLAMP))
        kind = rate(match, before, rules.replace(malus_per_bad_move=0.0))
    except (SedmaEloError, KeyError, TypeError, ValueError):
        return {}
    out: dict[str, dict[str, int]] = {}
    for c in changes:
        pid = c["player_id"]
        lines: dict[str, int] = {}
        if c["score"]["clamp"] != "none" and free[pid].score.clamp == "none":
            lines["clamp"] = free[pid].delta
        if c["score"]["malus"]["count"] > 0:
            lines["malus"] = kind[pid].delta
        if lines:
            out[pid] = lines
    return out
