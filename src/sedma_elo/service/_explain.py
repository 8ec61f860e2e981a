"""A private converter from the engine's explained result to JSON-able data.

Kept here until ``sedma_elo.explain`` lands on main; the service then switches to it.
"""

from __future__ import annotations

from typing import Any

from ..engine import PlayerChange, RatingResult

__all__ = ["change_to_dict", "result_to_dict"]


def change_to_dict(change: PlayerChange) -> dict[str, Any]:
    """Every number behind one player's change, plus one plain sentence."""
    score = change.score
    return {
        "player_id": change.player_id,
        "side": change.side,
        "rating_before": change.rating_before,
        "rating_after": change.rating_after,
        "delta": change.delta,
        "k": change.k,
        "k_reason": change.k_reason,
        "team_rating": change.team_rating,
        "opponent_rating": change.opponent_rating,
        "expected": change.expected,
        "change": change.change,
        "score": {
            "outcome": score.outcome,
            "base": score.base,
            "bonuses": [
                {
                    "kind": b.kind,
                    "count": b.count,
                    "per_round": b.per_round,
                    "cap": b.cap,
                    "value": b.value,
                    "capped": b.capped,
                }
                for b in score.bonuses
            ],
            "bonus_total": score.bonus_total,
            "bonus_scale": score.bonus_scale,
            "bonus_scaled": score.bonus_scaled,
            "malus": {
                "count": score.malus.count,
                "per_bad_move": score.malus.per_bad_move,
                "cap": score.malus.cap,
                "value": score.malus.value,
                "capped": score.malus.capped,
            },
            "unclamped": score.unclamped,
            "adjusted": score.adjusted,
            "clamp": score.clamp,
        },
        "sentence": (
            f"{change.player_id} ({score.outcome}) was expected to score {change.expected:.3f} and scored "
            f"{score.adjusted:.3f}; K={change.k} because {change.k_reason}; so the rating moved "
            f"{change.change:+.2f}, from {change.rating_before} to {change.rating_after}."
        ),
    }


def result_to_dict(result: RatingResult) -> dict[str, Any]:
    """The rules label and every player's change, side a first."""
    return {"rules": result.rules_label, "changes": [change_to_dict(c) for c in result.changes]}
