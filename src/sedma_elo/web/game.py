"""The game of an analysed match, shaped for the match page: rounds, tricks and the bad moves.

The page shows each round's tricks (the cards in order, who played and who took each), its points
and kind, and marks every bad move with what was played, what would have been better and what it
cost. The analysis (``MatchAnalysis.to_dict``, stored with the game) gives each cost as a code
and its numbers (``cost_detail``) besides the English; :func:`cost_text` says it in the reader's
language through the catalogs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.sentences import N_
from ..errors import GameRecordError
from ..game.record import parse_record
from ..game.tricks import round_tricks
from .lang import PageText

__all__ = ["bad_move_anchor", "card_label", "cost_text", "game_view"]

_SUITS = {"c": ("\u2663", "black"), "d": ("\u2666", "red"), "h": ("\u2665", "red"), "s": ("\u2660", "black")}

# The analysis's cost codes (``BadMove.cost_detail``) and their words, in the catalogs.
_WHAT = {
    "lost_round": N_("turned a won round into a lost one"),
    "gave_up_24": N_("gave up a 24er"),
    "gave_up_16": N_("gave up a 16er"),
    "conceded_24": N_("conceded a 24er"),
    "conceded_16": N_("conceded a 16er"),
    "lost_more": N_("lost more of the round"),
}
_OUTCOME = {
    "won": N_("won"),
    "won_16": N_("won as a 16er"),
    "won_24": N_("won as a 24er"),
    "lost": N_("lost"),
    "lost_16": N_("lost (16er against)"),
    "lost_24": N_("lost (24er against)"),
}


def cost_text(bad_move: Mapping[str, Any], text: PageText) -> str:
    """A bad move's cost in the reader's language, from its structured ``cost_detail``.

    A bad move without a detail the page knows (an analysis stored by an older version) shows its
    English ``cost`` as given.
    """
    detail = bad_move.get("cost_detail")
    fallback = str(bad_move.get("cost", ""))
    if not isinstance(detail, Mapping):
        return fallback
    kind, score = detail.get("kind"), str(detail.get("score", ""))
    if kind == "lost_value":
        message = (
            N_(
                "lost value in {share}% of all {deals} deals of the unseen cards at {score}: "
                "{value} match points on average"
            )
            if detail.get("all_deals")
            else N_(
                "lost value in {share}% of {deals} deals of the unseen cards at {score}: "
                "{value} match points on average"
            )
        )
        return text.gettext(
            message,
            share=text.integer(int(detail["share"])),
            deals=text.integer(int(detail["deals"])),
            score=score,
            value=text.decimal(float(detail["value"]), 2),
        )
    if kind not in _WHAT:
        return fallback
    said = text.gettext(_WHAT[str(kind)])
    got, best = detail.get("got"), detail.get("best")
    if got is None and best is None:
        return text.gettext(N_("{what} at {score}"), what=said, score=score)
    if got not in _OUTCOME or best not in _OUTCOME:
        return fallback
    return text.gettext(
        N_("{what} at {score} ({got} instead of {best})"),
        what=said,
        score=score,
        got=text.gettext(_OUTCOME[str(got)]),
        best=text.gettext(_OUTCOME[str(best)]),
    )


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
        "cost": cost_text(b, text),
    }


def _links(bad_moves: Sequence[Mapping[str, Any]], text: PageText) -> dict[str, list[dict[str, str]]]:
    """By player: a link to each of their bad moves, for the malus line of the explanation."""
    out: dict[str, list[dict[str, str]]] = {}
    for b in bad_moves:
        r, m = int(b["round"]), int(b["move"])
        label = text.gettext(N_("round {round}, move {move}"), round=text.integer(r), move=text.integer(m))
        out.setdefault(str(b["player"]), []).append({"href": "#" + bad_move_anchor(r, m), "label": label})
    return out
