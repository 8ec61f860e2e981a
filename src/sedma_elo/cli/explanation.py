"""The table and sentences ``rate`` and ``demo`` print for one rated match, in the reader's language."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import RatingResult
from ..core.explain import explain_player, result_to_dict
from ..core.sentences import ENGLISH, N_, Translator, decimal

__all__ = ["print_explanation"]

_BONUS_LABELS = {
    "won_by_16": N_("16er bonus"),
    "won_by_24": N_("24er bonus"),
    "won_by_4_and_last": N_("4-and-last bonus"),
}
_OUTCOMES = {"win": N_("win"), "loss": N_("loss"), "draw": N_("draw")}


def print_explanation(result: RatingResult, out: Console, translator: Translator = ENGLISH) -> None:
    """Print ``result`` as a table (one column per player) followed by each player's sentences.

    The table's labels, cells and the sentences are in ``translator``'s language (English by default).
    """
    tr = translator
    data = result_to_dict(result)
    table = Table(title=tr.gettext("Rating change ({rules})").format(rules=data["rules"]), show_lines=False)
    table.add_column("", style="bold")
    players: list[dict[str, Any]] = data["players"]
    for p in players:
        table.add_column(f"{p['player_id']} ({p['side']})", justify="right")

    def row(label: str, cells: list[str]) -> None:
        table.add_row(tr.gettext(label), *(decimal(cell, tr) for cell in cells))

    scores = [p["score"] for p in players]
    table.add_row(tr.gettext(N_("outcome")), *(tr.gettext(_OUTCOMES[p["outcome"]]) for p in players))
    row(N_("rating before"), [str(p["rating_before"]) for p in players])
    row("K", [str(p["k"]) for p in players])
    row(N_("expected score"), [f"{p['expected']:.4f}" for p in players])
    row(N_("base score"), [_g(s["base"]) for s in scores])
    for kind, label in _BONUS_LABELS.items():
        row(label, [_term(s["bonuses"][kind], "per_round", tr) for s in scores])
    row(N_("bonus kept"), [_kept(s) for s in scores])
    row(N_("malus"), [_term(s["malus"], "per_bad_move", tr, sign="-") for s in scores])
    row(N_("score before clamp"), [_g(s["unclamped"]) for s in scores])
    row(N_("clamp"), [_clamp(s, tr) for s in scores])
    row(N_("adjusted score"), [_g(s["adjusted"]) for s in scores])
    row(N_("change (unrounded)"), [f"{p['change']:+.4f}" for p in players])
    row(N_("rating after"), [f"{p['rating_after']} ({p['delta']:+d})" for p in players])
    out.print(table)
    for p in players:
        out.print()
        out.print(f"[bold]{p['player_id']}[/bold]")
        for sentence in explain_player(result, p["player_id"], translator=tr):
            out.print(Padding(Text(sentence), (0, 0, 0, 2), expand=False))


def _g(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") or "0"


def _term(t: dict[str, Any], per: str, tr: Translator, sign: str = "+") -> str:
    if t["count"] == 0:
        return "-"
    text = f"{t['count']} x {_g(t[per])} = {sign}{_g(t['value'])}"
    if t["capped"]:
        text += " " + tr.gettext("(capped at {cap})").format(cap=_g(t["cap"]))
    return text


def _kept(score: dict[str, Any]) -> str:
    if not score["bonus_total"]:
        return "-"
    return f"{_g(score['bonus_scale'] * 100)}% = +{_g(score['bonus_scaled'])}"


def _clamp(score: dict[str, Any], tr: Translator) -> str:
    if score["clamp"] == "none":
        return "-"
    message = N_("to max {score}") if score["clamp"] == "max" else N_("to min {score}")
    text = tr.gettext(message).format(score=_g(score["adjusted"]))
    if score["bonus_erased"]:
        text += tr.gettext(", erased bonus {bonus}").format(bonus=_g(score["bonus_erased"]))
    if score["malus_erased"]:
        text += tr.gettext(", erased malus {malus}").format(malus=_g(score["malus_erased"]))
    return text
