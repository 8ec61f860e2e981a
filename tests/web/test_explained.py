"""The match page reads both forms of the explanation object the service may answer with."""

from __future__ import annotations

from typing import Any

from sedma_elo.web.explained import changes_of as _changes_of
from sedma_elo.web.explained import normalized as _normalized


def _term(count: int, per: float, cap: float) -> dict[str, Any]:
    value = min(count * per, cap)
    return {"count": count, "per_round": per, "cap": cap, "value": value, "capped": count * per > cap}


def _score(bonuses: Any) -> dict[str, Any]:
    return {
        "base": 1.0,
        "bonuses": bonuses,
        "bonus_total": 0.15,
        "bonus_scale": 1.0,
        "bonus_scaled": 0.15,
        "malus": {"count": 0, "per_bad_move": 0.02, "cap": 0.3, "value": 0.0, "capped": False},
        "unclamped": 1.15,
        "adjusted": 1.0,
        "clamp": "max",
    }


def test_bonuses_keyed_by_kind_become_a_list_in_rule_order() -> None:
    """The engine's form (bonuses keyed by kind, outcome beside score, sentences in 'explanation')."""
    raw = {
        "player_id": "alice",
        "outcome": "win",
        "rating_before": 1000,
        "rating_after": 1026,
        "score": _score(
            {
                "won_by_16": _term(4, 0.05, 0.15),
                "won_by_24": _term(0, 0.1, 0.2),
                "won_by_4_and_last": _term(0, 0.03, 0.09),
            }
        ),
        "explanation": ["alice won: +26.", "K is 40."],
    }
    change = _normalized(raw)
    assert [b["kind"] for b in change["score"]["bonuses"]] == ["won_by_16", "won_by_24", "won_by_4_and_last"]
    assert change["score"]["bonuses"][0]["uncapped"] == 4 * 0.05
    assert change["score"]["outcome"] == "win"
    assert change["sentences"] == ["alice won: +26.", "K is 40."]
    assert change["delta"] == 26


def test_list_form_with_one_sentence() -> None:
    """The service's first form: bonuses as a list with their kind, one 'sentence'."""
    bonuses = [{"kind": "won_by_16", **_term(1, 0.05, 0.15)}]
    raw = {
        "player_id": "bob",
        "rating_before": 1000,
        "rating_after": 990,
        "delta": -10,
        "score": {**_score(bonuses), "outcome": "loss"},
        "sentence": "bob lost.",
    }
    change = _normalized(raw)
    assert change["sentences"] == ["bob lost."]
    assert change["score"]["malus"]["uncapped"] == 0
    assert change["score"]["outcome"] == "loss"


def test_changes_are_found_under_either_key() -> None:
    """A match answer lists its players under 'changes', 'players' or explanation.players."""
    assert _changes_of({"changes": [{"a": 1}]}) == [{"a": 1}]
    assert _changes_of({"players": [{"b": 2}]}) == [{"b": 2}]
    assert _changes_of({"explanation": {"players": [{"c": 3}]}}) == [{"c": 3}]
    assert _changes_of({"voided": True}) == []


def test_variant_reason_and_notes_read_in_the_reader_s_language() -> None:
    """A stored zero-sum explanation shows its K reason and notes in Slovak on the match page."""
    from sedma_elo import REFERENCE_RULES, Match, rate
    from sedma_elo.core.explain import change_to_dict
    from sedma_elo.i18n import translations

    rules = REFERENCE_RULES.replace(zero_sum=True, rating_floor=995)
    result = rate(Match.single("x", "y", "a"), {"x": 1000, "y": 1000}, rules)
    view = _normalized(change_to_dict(result, "y"), translations("sk"))
    assert (
        view["k_reason_text"] == "nulový súčet: priemer K hráčov; vlastné K 40 (hodnotenie 1000 je pod 1200)"
    )
    assert "Dolná hranica hodnotenia: zvýšené z 980 na 995." in view["sentences"]
    assert not any("zero-sum" in s for s in view["sentences"])
