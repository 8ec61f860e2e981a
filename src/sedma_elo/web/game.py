"""The game of an analysed match, shaped for the match page: rounds, tricks and the bad moves.

The page shows each round's tricks (the cards in order, who played and who took each), its points
and kind, and marks every bad move with what was played, what would have been better and what it
cost. The analysis (``MatchAnalysis.to_dict``, stored with the game) states costs in English;
:func:`cost_text` says them in the reader's language.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.sentences import N_
from ..errors import GameRecordError
from ..game.record import parse_record
from ..game.tricks import round_tricks
from .lang import PageText

__all__ = ["bad_move_anchor", "card_label", "cost_text", "game_view"]

_SUITS = {"c": ("\u2663", "black"), "d": ("\u2666", "red"), "h": ("\u2665", "red"), "s": ("\u2660", "black")}

_WHAT = {
    "turned a won round into a lost one": N_("turned a won round into a lost one"),
    "gave up a 24er": N_("gave up a 24er"),
    "gave up a 16er": N_("gave up a 16er"),
    "conceded a 24er": N_("conceded a 24er"),
    "conceded a 16er": N_("conceded a 16er"),
    "lost more of the round": N_("lost more of the round"),
}
_OUTCOME = {
    "won": N_("won"),
    "won as a 16er": N_("won as a 16er"),
    "won as a 24er": N_("won as a 24er"),
    "lost": N_("lost"),
    "lost (16er against)": N_("lost (16er against)"),
    "lost (24er against)": N_("lost (24er against)"),
}
_SAMPLED = re.compile(
    r"lost value in (\d+)% of (all )?(\d+) deals of the unseen cards at (\d+:\d+): "
    r"(-?[\d.]+) match points on average"
)
_EXACT = re.compile(r"(.+?) at (\d+:\d+)(?: \((.+) instead of (.+)\))?")


def cost_text(cost: str, text: PageText) -> str:
    """A bad move's cost (as the analysis words it) in the reader's language; unknown forms as given."""
    found = _SAMPLED.fullmatch(cost)
    if found:
        share, every, deals, score, value = found.groups()
        message = (
            N_(
                "lost value in {share}% of all {deals} deals of the unseen cards at {score}: "
                "{value} match points on average"
            )
            if every
            else N_(
                "lost value in {share}% of {deals} deals of the unseen cards at {score}: "
                "{value} match points on average"
            )
        )
        return text.gettext(
            message,
            share=share,
            deals=text.integer(int(deals)),
            score=score,
            value=text.decimal(float(value), 2),
        )
    found = _EXACT.fullmatch(cost)
    if found and found.group(1) in _WHAT:
        what, score, got, best = found.groups()
        said = text.gettext(_WHAT[what])
        if got is None:
            return text.gettext(N_("{what} at {score}"), what=said, score=score)
        if got in _OUTCOME and best in _OUTCOME:
            return text.gettext(
                N_("{what} at {score} ({got} instead of {best})"),
                what=said,
                score=score,
                got=text.gettext(_OUTCOME[got]),
                best=text.gettext(_OUTCOME[best]),
            )
    return cost


def card_label(card: str) -> dict[str, str]:
    """A card code (``Th``) as the page prints it: ``{"rank": "10", "suit": "♥", "color": "red"}``."""
    if card == "stop" or len(card) != 2 or card[1] not in _SUITS:
        return {"rank": card, "suit": "", "color": ""}
    symbol, color = _SUITS[card[1]]
    return {"rank": "10" if card[0] == "T" else card[0], "suit": symbol, "color": color, "code": card}


def bad_move_anchor(round_number: int, move: int) -> str:
    """The page anchor of the bad move ``move`` of round ``round_number`` (both from 1)."""
    return f"bad-r{round_number}-m{move}"


_KINDS = {"plain": N_("plain"), "16": N_("16er"), "24": N_("24er"), "4_and_last": N_("4 and last")}


def game_view(
    record: Mapping[str, Any], analysis: Mapping[str, Any], text: PageText
) -> dict[str, Any] | None:
    """The template's view of an analysed game; ``None`` when the stored record cannot be replayed."""
    try:
        parsed = parse_record(record)
        tricks = round_tricks(parsed)
    except GameRecordError:
        return None
    players = list(parsed.players)
    bad_moves = analysis.get("bad_moves", [])
    marked = {(int(b["round"]), int(b["move"])): b for b in bad_moves}
    rounds = []
    for r, (summary, round_tricks_) in enumerate(zip(analysis.get("rounds", []), tricks, strict=False)):
        number = r + 1
        side = str(summary["winner"])
        winners = [p for seat, p in enumerate(players) if "ab"[seat % 2] == side]
        rows = []
        for t, trick in enumerate(round_tricks_):
            plays = []
            for play in trick.plays:
                bad = marked.get((number, play.move))
                plays.append(
                    {
                        "move": play.move,
                        "player": players[play.seat],
                        "card": card_label(play.card),
                        "bad": bad_move_anchor(number, play.move) if bad is not None else None,
                    }
                )
            rows.append(
                {"number": t + 1, "plays": plays, "taker": players[trick.taker], "points": trick.points}
            )
        rounds.append(
            {
                "number": number,
                "points": list(summary["points"]),
                "kind": text.gettext(_KINDS.get(str(summary["kind"]), str(summary["kind"]))),
                "winners": winners,
                "tricks": rows,
                "bad_moves": [_bad(b, text) for b in bad_moves if int(b["round"]) == number],
            }
        )
    return {
        "rounds": rounds,
        "judged": int(analysis.get("judged_moves", 0)),
        "unjudged": int(analysis.get("unjudged_moves", 0)),
        "bad_count": len(bad_moves),
        "links": _links(bad_moves, text),
    }


def _bad(b: Mapping[str, Any], text: PageText) -> dict[str, Any]:
    return {
        "anchor": bad_move_anchor(int(b["round"]), int(b["move"])),
        "round": int(b["round"]),
        "move": int(b["move"]),
        "player": b["player"],
        "played": card_label(str(b["played"])),
        "better": [card_label(str(c)) for c in b.get("better", ())],
        "cost": cost_text(str(b["cost"]), text),
    }


def _links(bad_moves: Sequence[Mapping[str, Any]], text: PageText) -> dict[str, list[dict[str, str]]]:
    """By player: a link to each of their bad moves, for the malus line of the explanation."""
    out: dict[str, list[dict[str, str]]] = {}
    for b in bad_moves:
        r, m = int(b["round"]), int(b["move"])
        label = text.gettext(N_("round {round}, move {move}"), round=text.integer(r), move=text.integer(m))
        out.setdefault(str(b["player"]), []).append({"href": "#" + bad_move_anchor(r, m), "label": label})
    return out
