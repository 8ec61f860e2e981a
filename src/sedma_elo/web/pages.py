"""The HTML pages: leaderboard, player profile with rating chart, and the explanation of a match.

The pages read through the same service layer as the JSON API: the ``Ledger`` that the app factory
stores on ``app.state.reads`` (``PageReads``). This module only shapes the service's answers.
Every template autoescapes, so player-supplied strings always render as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import fields, is_dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.responses import HTMLResponse

from ..errors import NotFoundError, SedmaEloError, ValidationError
from .cache import TimedLru
from .chart import ChartPoint, build_chart
from .render import player_path, render_page
from .trends import Trend, trend_of

if TYPE_CHECKING:  # the service includes this router: importing it at run time would be circular
    from ..service.reads import PageReads

__all__ = ["router"]

router = APIRouter(include_in_schema=False)

#: Leaderboard rows per page unless ``?limit=`` says otherwise (at most MAX_LIMIT).
PAGE_SIZE = 50
MAX_LIMIT = 100
#: Matches per page of a player's match list.
HISTORY_PAGE_SIZE = 25
#: The trend column shows the rating change over this many most recent matches.
TREND_WINDOW = 10
#: At most this many players are listed for a search that names no player exactly.
SEARCH_LIMIT = 20
#: History is read from the service this many entries per call (its largest page).
HISTORY_READ = 500

BONUS_NAMES = {
    "won_by_16": "16ers",
    "won_by_24": "24ers",
    "won_by_4_and_last": "4 and last",
}
ROUNDING_TEXT = {
    "half_even": "rounded to the nearest integer, halves to even",
    "half_up": "rounded to the nearest integer, halves up",
}
_STATIC = {"style.css": "text/css; charset=utf-8"}


def _service(request: Request) -> PageReads:
    """The service layer's typed read interface (the ``Ledger`` the app factory opened)."""
    reads: PageReads = request.app.state.reads
    return reads


def _data(obj: Any) -> dict[str, Any]:
    """A service answer as a plain mapping (dicts, dataclasses and pydantic models alike)."""
    if isinstance(obj, Mapping):
        return dict(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in fields(obj)}
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dict(dump(mode="json"))
    raise TypeError(f"cannot read a {type(obj).__name__} as a mapping")


def _base_context(request: Request, **extra: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "root": request.scope.get("root_path", "").rstrip("/"),
        "query": "",
        "rules_label": "",
    }
    context.update(extra)
    if not context["rules_label"]:
        try:
            context["rules_label"] = _service(request).active_version().rules.label
        except SedmaEloError:
            context["rules_label"] = "(none yet)"
    return context


def _error_page(request: Request, message: str, *, status_code: int, query: str = "") -> HTMLResponse:
    title = "Not found" if status_code == 404 else "Bad request"
    return render_page(
        "not_found.html",
        _base_context(request, message=message, query=query, title=title),
        status_code=status_code,
    )


# ---------------------------------------------------------------------------- leaderboard
def _history(svc: Any, player_id: str) -> list[dict[str, Any]]:
    """The player's whole rating history oldest first, read page by page through the service."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = _data(svc.player_history(player_id, limit=HISTORY_READ, cursor=cursor))
        items.extend(page["items"])
        cursor = page.get("next_cursor")
        if not cursor:
            return items


def _trends(svc: Any, version_id: Any, rows: Sequence[Mapping[str, Any]]) -> dict[str, Trend | None]:
    """Each row's trend over its last TREND_WINDOW matches, from one batched service read."""
    recent = svc.recent_changes([r["player_id"] for r in rows], TREND_WINDOW, version_id)
    trends: dict[str, Trend | None] = {}
    for pid, newest_first in recent.items():
        if not newest_first:  # the player's only match was voided since the leaderboard read
            trends[pid] = None
            continue
        oldest_first = newest_first[::-1]
        trends[pid] = trend_of([oldest_first[0]["rating_before"], *(h["rating_after"] for h in oldest_first)])
    return trends


@router.get("/", response_class=HTMLResponse)
def leaderboard_page(
    request: Request,
    cursor: str | None = Query(None, max_length=400),
    limit: int = Query(PAGE_SIZE, ge=1, le=MAX_LIMIT),
) -> Response:
    """The leaderboard, highest rating first, one keyset page at a time."""
    svc = _service(request)
    try:
        page = _data(svc.leaderboard(limit, cursor))
    except ValidationError as exc:
        return _error_page(request, f"This page link is not valid ({exc}).", status_code=400)
    trends = _trends(svc, page.get("version_id"), page["items"])
    rows = [{**item, "trend": trends.get(item["player_id"])} for item in page["items"]]
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
    """Jump to the player whose id is ``q`` (surrounding blanks ignored), else list ids starting with it."""
    wanted = q.strip()
    root = request.scope.get("root_path", "").rstrip("/")
    if not wanted:
        return RedirectResponse(root + "/", status_code=303)
    svc = _service(request)
    try:
        svc.get_player(wanted)
    except (NotFoundError, ValidationError):
        pass
    else:
        return RedirectResponse(root + player_path(wanted), status_code=303)
    try:
        found = svc.search_players(wanted, SEARCH_LIMIT)
    except ValidationError:  # e.g. a control character: no id can start with it
        found = []
    if not found:
        return _error_page(request, f"No player with the id “{wanted}”.", status_code=404, query=wanted)
    return render_page(
        "search.html",
        _base_context(request, query=wanted, found=found, more=len(found) == SEARCH_LIMIT),
    )


# ---------------------------------------------------------------------------- player
def _sides(body: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Side a and side b of a match in its JSON form (one against one, or two against two)."""
    if body.get("player_a") is not None:
        return [body["player_a"]], [body["player_b"]]
    return list(body.get("team_a") or []), list(body.get("team_b") or [])


def _sides_of_match(request: Request, svc: Any, match_id: str) -> tuple[list[str], list[str], str]:
    """Side a, side b and the winner of a match, through the app's cache (they never change)."""
    cache: TimedLru[tuple[list[str], list[str], str]] | None = getattr(request.app.state, "web_matches", None)
    if cache is None:
        cache = request.app.state.web_matches = TimedLru(size=50_000, ttl=3600.0)

    def compute() -> tuple[list[str], list[str], str]:
        body = _data(svc.get_match(match_id))["match"]
        team_a, team_b = _sides(body)
        return team_a, team_b, str(body.get("winner"))

    try:
        return cache.get(match_id, compute)
    except NotFoundError:
        return [], [], ""


def _opponents(sides: tuple[list[str], list[str], str], player_id: str) -> tuple[list[str], str]:
    """The player's opponents in a match (side a, side b, winner) and the result from their side."""
    team_a, team_b, winner = sides
    if not team_a and not team_b:
        return [], ""  # the match is gone (cannot happen while the ledger keeps every match)
    side = "a" if player_id in team_a else "b"
    result = "draw" if winner == "draw" else ("win" if winner == side else "loss")
    return (team_b if side == "a" else team_a), result


@router.get("/players/{player_id:path}", response_class=HTMLResponse)
def player_page(
    request: Request,
    player_id: str,
    page: int = Query(1, ge=1, le=1_000_000),
) -> Response:
    """A player's rating, a chart of it over time and their matches (newest first) with each change."""
    svc = _service(request)
    try:
        player = _data(svc.get_player(player_id))
        history = _history(svc, player_id)
    except (NotFoundError, ValidationError):
        return _error_page(request, f"No player with the id “{player_id}”.", status_code=404, query=player_id)
    with suppress(SedmaEloError):
        around = _data(svc.around(player_id, 0))
        player["rank"] = around["items"][0]["rank"] if around["items"] else None
    player.setdefault("rank", None)
    newest_first = history[::-1]
    pages = max(1, -(-len(newest_first) // HISTORY_PAGE_SIZE))
    if page > pages:
        return _error_page(request, f"{player_id} has no page {page} of matches.", status_code=404)
    shown = newest_first[(page - 1) * HISTORY_PAGE_SIZE : page * HISTORY_PAGE_SIZE]
    rows = []
    for item in shown:
        row = dict(item)
        row["delta"] = row["rating_after"] - row["rating_before"]
        row["opponents"], row["result"] = _opponents(
            _sides_of_match(request, svc, row["match_id"]), player_id
        )
        rows.append(row)
    base = player_path(player_id)
    return render_page(
        "player.html",
        _base_context(
            request,
            player=player,
            rows=rows,
            chart=build_chart(_chart_points(history)),
            first_played=history[0].get("played_at") if history else None,
            last_played=history[-1].get("played_at") if history else None,
            newer_url=None if page == 1 else (base if page == 2 else f"{base}?page={page - 1}"),
            older_url=None if page == pages else f"{base}?page={page + 1}",
            page=page,
            pages=pages,
        ),
    )


def _chart_points(history: Sequence[Mapping[str, Any]]) -> list[ChartPoint]:
    """The chart's points: the rating before the first match, then after each match."""
    if not history:
        return []
    points = [ChartPoint(0, history[0]["rating_before"], f"start: {history[0]['rating_before']}")]
    for i, h in enumerate(history, start=1):
        when = str(h.get("played_at") or "")[:10]
        label = f"match {i} ({h['match_id']}{', ' + when if when else ''}): {h['rating_after']}"
        points.append(ChartPoint(i, h["rating_after"], label))
    return points


# ---------------------------------------------------------------------------- match
@router.get("/matches/{match_id:path}", response_class=HTMLResponse)
def match_page(request: Request, match_id: str) -> Response:
    """Every player's change in one match, explained in plain words and numbers."""
    svc = _service(request)
    try:
        view = _data(svc.get_match(match_id))
    except (NotFoundError, ValidationError):
        return _error_page(request, f"No match with the id “{match_id}”.", status_code=404)
    body = view["match"]
    players = []
    for raw in _changes_of(view):
        change = _normalized(raw)
        sentences = change["sentences"]
        if change["from_explain"] and sentences:
            # sedma_elo.core.explain's first sentence is the summary ("alice won against ...: +26").
            headline, sentences = sentences[0], sentences[1:]
        else:
            headline = _headline(change)
        players.append({"change": change, "headline": headline, "sentences": sentences})
    rounding = "half_even"
    with suppress(SedmaEloError, AttributeError):
        rounding = svc.active_version().rules.rounding
    return render_page(
        "match.html",
        _base_context(
            request,
            match=view,
            result_text=_result_text(body),
            players=players,
            bonus_names=BONUS_NAMES,
            rounding_text=ROUNDING_TEXT.get(rounding, rounding),
            rules_label=view["ratings_version"]["rules"],
        ),
    )


def _changes_of(view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The per-player explanation objects of a match answer (``changes``, or ``players``)."""
    for key in ("changes", "players"):
        found = view.get(key)
        if isinstance(found, list):
            return found
    nested = view.get("explanation")
    if isinstance(nested, Mapping):
        return _changes_of(nested)
    return []


def _normalized(change: Mapping[str, Any]) -> dict[str, Any]:
    """One player's explanation in the form the template reads.

    Accepts both forms of the explanation object (bonuses as a list or keyed by kind; the outcome
    inside ``score`` or beside it; sentences as ``explanation``, ``sentences`` or one ``sentence``) and
    fills in each term's ``uncapped`` value (count times rate, before the cap) where it is missing.
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
    delta = change.get("delta", change["rating_after"] - change["rating_before"])
    from_explain = isinstance(change.get("explanation"), list)
    return {
        **change,
        "score": score,
        "sentences": [str(x) for x in sentences],
        "delta": delta,
        "from_explain": from_explain,
    }


def _result_text(body: Mapping[str, Any]) -> str:
    if body.get("winner") == "draw":
        return "draw"
    team_a, team_b = _sides(body)
    return " & ".join(team_a if body.get("winner") == "a" else team_b) + " won"


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
