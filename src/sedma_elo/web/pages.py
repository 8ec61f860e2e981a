"""The HTML pages: leaderboard, player profile with rating chart, and the explanation of a match.

The pages read through the same service layer as the JSON API (``request.app.state.service``); this
module only shapes the service's answers for the templates. Every template autoescapes, so player-
supplied strings always render as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.responses import HTMLResponse

from ..errors import NotFoundError, ValidationError
from .chart import ChartPoint, Sparkline, build_chart, build_sparkline
from .render import player_path, render_page

__all__ = ["router"]

router = APIRouter(include_in_schema=False)

#: Leaderboard rows per page unless ``?limit=`` says otherwise (at most MAX_LIMIT).
PAGE_SIZE = 50
MAX_LIMIT = 100
#: Matches per page of a player's match list.
HISTORY_PAGE_SIZE = 25
#: The trend column shows the rating change over this many most recent matches.
TREND_WINDOW = 10
#: The chart draws at most this many most recent matches.
CHART_MATCHES = 2000

BONUS_NAMES = {
    "won_by_16": "16ers",
    "won_by_24": "24ers",
    "won_by_4_and_last": "4 and last",
}
_STATIC = {"style.css": "text/css; charset=utf-8"}


def _service(request: Request) -> Any:
    return request.app.state.service


def _data(obj: Any) -> dict[str, Any]:
    """A service answer as a plain mapping (pydantic models, dataclasses and dicts alike)."""
    if isinstance(obj, Mapping):
        return dict(obj)
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dict(dump(mode="json"))
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    raise TypeError(f"cannot read a {type(obj).__name__} as a mapping")


def _base_context(request: Request, **extra: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "root": request.scope.get("root_path", "").rstrip("/"),
        "query": "",
        "rules_label": getattr(_service(request), "rules_label", ""),
    }
    context.update(extra)
    return context


def _not_found(request: Request, message: str, query: str = "") -> HTMLResponse:
    return render_page(
        "not_found.html", _base_context(request, message=message, query=query), status_code=404
    )


def _bad_request(request: Request, message: str) -> HTMLResponse:
    return render_page("not_found.html", _base_context(request, message=message), status_code=400)


# ---------------------------------------------------------------------------- leaderboard
@dataclass(frozen=True, slots=True)
class Trend:
    """A player's rating change over their last ``matches`` matches, with a sparkline of it."""

    delta: int
    matches: int
    spark: str
    width: int
    height: int


def _trend(ratings: Sequence[int]) -> Trend | None:
    """The trend of ratings oldest first, starting with the rating before the first of them."""
    if len(ratings) < 2:
        return None
    spark: Sparkline = build_sparkline(ratings)
    return Trend(ratings[-1] - ratings[0], len(ratings) - 1, spark.points, spark.width, spark.height)


@router.get("/", response_class=HTMLResponse)
def leaderboard_page(
    request: Request,
    cursor: str | None = Query(None, max_length=512),
    limit: int = Query(PAGE_SIZE, ge=1, le=MAX_LIMIT),
) -> Response:
    """The leaderboard, highest rating first, one keyset page at a time."""
    svc = _service(request)
    try:
        page = _data(svc.leaderboard(limit=limit, cursor=cursor))
    except ValidationError as exc:
        return _bad_request(request, f"Bad page link ({exc}).")
    rows = []
    for item in page["items"]:
        row = _data(item)
        history = _data(svc.player_history(row["player_id"], limit=TREND_WINDOW))
        ratings = [_data(h)["rating_after"] for h in reversed(history["items"])]
        if history["items"]:
            ratings.insert(0, _data(history["items"][-1])["rating_before"])
        row["trend"] = _trend(ratings)
        rows.append(row)
    next_url = None
    if page.get("next_cursor"):
        params = {"cursor": page["next_cursor"]}
        if limit != PAGE_SIZE:
            params["limit"] = str(limit)
        next_url = "/?" + urlencode(params)
    return render_page(
        "leaderboard.html",
        _base_context(
            request,
            rows=rows,
            next_url=next_url,
            first_page=cursor is None,
            limit=limit,
            trend_window=TREND_WINDOW,
        ),
    )


@router.get("/search", response_class=HTMLResponse)
def search_page(request: Request, q: str = Query("", max_length=256)) -> Response:
    """Jump to the player whose id is ``q`` (surrounding blanks ignored), or say there is none."""
    wanted = q.strip()
    if not wanted:
        return RedirectResponse(_base_context(request)["root"] + "/", status_code=303)
    try:
        _service(request).get_player(wanted)
    except (NotFoundError, ValidationError):
        return _not_found(request, f"No player with the id “{wanted}”.", query=wanted)
    return RedirectResponse(_base_context(request)["root"] + player_path(wanted), status_code=303)


# ---------------------------------------------------------------------------- player
def _opponents(match: Mapping[str, Any], player_id: str) -> tuple[list[str], str]:
    """The player's opponents in ``match`` (its JSON form) and the result from their side."""
    if "player_a" in match and match.get("player_a") is not None:
        team_a, team_b = [match["player_a"]], [match["player_b"]]
    else:
        team_a, team_b = list(match.get("team_a") or []), list(match.get("team_b") or [])
    side = "a" if player_id in team_a else "b"
    winner = match.get("winner")
    result = "draw" if winner == "draw" else ("win" if winner == side else "loss")
    return (team_b if side == "a" else team_a), result


@router.get("/players/{player_id:path}", response_class=HTMLResponse)
def player_page(
    request: Request,
    player_id: str,
    cursor: str | None = Query(None, max_length=512),
) -> Response:
    """A player's rating, a chart of it over time and their matches (newest first) with each change."""
    svc = _service(request)
    try:
        player = _data(svc.get_player(player_id))
        page = _data(svc.player_history(player_id, limit=HISTORY_PAGE_SIZE, cursor=cursor))
    except NotFoundError:
        return _not_found(request, f"No player with the id “{player_id}”.", query=player_id)
    except ValidationError as exc:
        return _bad_request(request, f"Bad page link ({exc}).")
    rows = []
    for item in page["items"]:
        row = _data(item)
        row["delta"] = row["rating_after"] - row["rating_before"]
        row["opponents"], row["result"] = _opponents(row.get("match") or row, player_id)
        rows.append(row)
    chart = build_chart(_chart_points(svc, player_id))
    next_url = None
    if page.get("next_cursor"):
        next_url = player_path(player_id) + "?" + urlencode({"cursor": page["next_cursor"]})
    return render_page(
        "player.html",
        _base_context(
            request,
            player=player,
            rows=rows,
            chart=chart,
            next_url=next_url,
            first_page=cursor is None,
        ),
    )


def _chart_points(svc: Any, player_id: str) -> list[ChartPoint]:
    """Up to CHART_MATCHES most recent ratings, oldest first, with the rating before the first."""
    collected: list[dict[str, Any]] = []
    cursor = None
    while len(collected) < CHART_MATCHES:
        page = _data(svc.player_history(player_id, limit=MAX_LIMIT, cursor=cursor))
        collected.extend(_data(h) for h in page["items"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    if not collected:
        return []
    collected.reverse()
    total = int(_data(svc.get_player(player_id)).get("matches_played", len(collected)))
    start = total - len(collected)
    points = [ChartPoint(start, collected[0]["rating_before"], "before the first match shown")]
    for i, h in enumerate(collected, start=start + 1):
        when = str(h.get("played_at") or "")[:10]
        label = f"#{i} {h['match_id']}{' · ' + when if when else ''}: {h['rating_after']}"
        points.append(ChartPoint(i, h["rating_after"], label))
    return points


# ---------------------------------------------------------------------------- match
@router.get("/matches/{match_id:path}", response_class=HTMLResponse)
def match_page(request: Request, match_id: str) -> Response:
    """Every player's change in one match, explained in plain words and numbers."""
    svc = _service(request)
    try:
        match = _data(svc.get_match(match_id))
    except NotFoundError:
        return _not_found(request, f"No match with the id “{match_id}”.")
    players = []
    for change in match["explanation"]["changes"]:
        _fill_uncapped(change)
        players.append({"change": change, "headline": _headline(change), "sentences": []})
    match["result_text"] = _result_text(match)
    return render_page(
        "match.html",
        _base_context(
            request,
            match=match,
            players=players,
            bonus_names=BONUS_NAMES,
            rounding_text="rounded half to even",
        ),
    )


def _fill_uncapped(change: dict[str, Any]) -> None:
    """Add ``uncapped`` (count times rate, before the cap) to each bonus and the malus, if missing."""
    score = change["score"]
    for term in score["bonuses"]:
        term.setdefault("uncapped", term["count"] * term["per_round"])
    malus = score["malus"]
    malus.setdefault("uncapped", malus["count"] * malus["per_bad_move"])


def _result_text(match: Mapping[str, Any]) -> str:
    if match.get("winner") == "draw":
        return "draw"
    side = match.get("winner")
    if match.get("player_a") is not None:
        return f"{match[f'player_{side}']} won"
    return " & ".join(match.get(f"team_{side}") or []) + " won"


def _headline(change: Mapping[str, Any]) -> str:
    outcome = change["score"]["outcome"]
    stronger = change["opponent_rating"] > change["team_rating"]
    weaker = change["opponent_rating"] < change["team_rating"]
    who = "a stronger" if stronger else ("a weaker" if weaker else "an equally rated")
    verb = {"win": "won against", "loss": "lost against", "draw": "drew with"}[outcome]
    delta = change["rating_after"] - change["rating_before"]
    sign = f"+{delta}" if delta > 0 else (f"\u2212{-delta}" if delta < 0 else "±0")
    return f"{change['player_id']} {verb} {who} opponent: {sign}."


# ---------------------------------------------------------------------------- static files
@router.get("/static/{name}")
def static_file(name: str) -> Response:
    """The pages' stylesheet (only files listed in _STATIC are served)."""
    media_type = _STATIC.get(name)
    if media_type is None:
        return Response("not found", status_code=404, media_type="text/plain")
    body = resources.files("sedma_elo.web").joinpath("static", name).read_bytes()
    return Response(body, media_type=media_type, headers={"Cache-Control": "public, max-age=3600"})
