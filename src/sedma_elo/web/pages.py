"""The HTML pages: leaderboard, player profile with rating chart, and the explanation of a match.

The pages read through the same service layer as the JSON API (``reads.service``, the one place
that touches ``request.app.state``). Every page speaks the reader's language (``lang.page_text``:
``?lang=``, the cookie, ``Accept-Language``) and remembers a ``?lang=`` choice in a cookie.
Every template autoescapes, so player-supplied strings always render as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.responses import HTMLResponse

from ..core.ids import check_id
from ..core.provisional import is_provisional
from ..errors import NotFoundError, SedmaEloError, ValidationError
from .board import MAX_READS, READ, established_page
from .chart import MAX_POINTS, NARROW, RANGES, WIDE, ChartPoint, build_chart
from .explained import changes_of, normalized, what_if, winner_first
from .game import game_view
from .lang import PageText, page_text, remember_language
from .profile import Career, chart_points, match_row
from .reads import (
    analysed_game,
    as_mapping,
    pending_game,
    provisional_matches,
    service,
    sides_of,
)
from .render import player_path, render_page
from .trends import Trend, trend_of

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

_STATIC = {"style.css": "text/css; charset=utf-8"}


def _page(
    request: Request, text: PageText, template: str, status_code: int = 200, **context: Any
) -> HTMLResponse:
    """Render a page in the reader's language, with the context every page has."""
    base: dict[str, Any] = {
        "root": request.scope.get("root_path", "").rstrip("/"),
        "query": "",
        "rules_label": "",
    }
    base.update(context)
    if not base["rules_label"]:
        try:
            base["rules_label"] = service(request).active_version().rules.label
        except SedmaEloError:
            base["rules_label"] = text.gettext("(none yet)")
    response = render_page(template, base, text=text, status_code=status_code)
    remember_language(request, response)
    return response


def _error_page(
    request: Request, text: PageText, message: str, *, status_code: int, query: str = ""
) -> HTMLResponse:
    title = text.gettext("Not found") if status_code == 404 else text.gettext("Bad request")
    return _page(request, text, "not_found.html", status_code, message=message, query=query, title=title)


# ---------------------------------------------------------------------------- leaderboard
def _trends(svc: Any, version_id: Any, rows: Sequence[Mapping[str, Any]]) -> dict[str, Trend | None]:
    """Each row's trend over its last TREND_WINDOW matches, from one batched service read."""
    if not rows:
        return {}
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
    show_all: bool = Query(False, alias="all", description="also list provisional players"),
) -> Response:
    """The leaderboard, highest rating first, one keyset page at a time (provisional players on request)."""
    text = page_text(request)
    svc = service(request)
    threshold = provisional_matches(request)
    try:
        if show_all or threshold <= 0:
            page = as_mapping(svc.leaderboard(limit, cursor))
            items, next_cursor, version = page["items"], page.get("next_cursor"), page.get("version_id")
        else:
            items, next_cursor, version = established_page(svc, limit, cursor, threshold)
    except ValidationError as exc:
        message = text.gettext("This page link is not valid ({reason}).", reason=str(exc))
        return _error_page(request, text, message, status_code=400)
    trends = _trends(svc, version, items)
    rows = [
        {
            **item,
            "trend": trends.get(item["player_id"]),
            "provisional": is_provisional(item["matches_played"], threshold),
        }
        for item in items
    ]
    params: dict[str, str] = {}
    if show_all:
        params["all"] = "1"
    if limit != PAGE_SIZE:
        params["limit"] = str(limit)
    next_url = "/?" + urlencode({**params, "cursor": next_cursor}) if next_cursor else None
    return _page(
        request,
        text,
        "leaderboard.html",
        rows=rows,
        next_url=next_url,
        first_url="/?" + urlencode(params) if params else "/",
        first_page=cursor is None,
        limit=limit,
        trend_window=TREND_WINDOW,
        show_all=show_all,
        threshold=threshold,
        toggle_url=text.with_query(all=None if show_all else "1", cursor=None),
        scan_rows=READ * MAX_READS,
    )


@router.get("/search", response_class=HTMLResponse)
def search_page(request: Request, q: str = Query("", max_length=256)) -> Response:
    """Jump to the player whose id is ``q`` (surrounding blanks ignored), else list ids starting with it."""
    text = page_text(request)
    wanted = q.strip()
    root = request.scope.get("root_path", "").rstrip("/")
    if not wanted:
        return RedirectResponse(root + "/", status_code=303)
    svc = service(request)
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
    threshold = provisional_matches(request)
    if not found:
        message = text.gettext("No player with the id “{id}”.", id=wanted)
        return _error_page(request, text, message, status_code=404, query=wanted)
    rows = [{**row, "provisional": is_provisional(row["matches_played"], threshold)} for row in found]
    return _page(request, text, "search.html", query=wanted, found=rows, more=len(found) == SEARCH_LIMIT)


# ---------------------------------------------------------------------------- player
@router.get("/players/{player_id:path}", response_class=HTMLResponse)
def player_page(
    request: Request,
    player_id: str,
    before: int | None = Query(None, ge=0, description="list the matches older than this sequence"),
    after: int | None = Query(None, ge=0, description="list the matches newer than this sequence"),
    span: str = Query("all", alias="range", pattern="^(1m|3m|1y|all)$"),
) -> Response:
    """A player's rating, record, chart over time and matches (newest first) with each change.

    The match list is keyset-paginated by sequence (``?before=`` / ``?after=``, HISTORY_PAGE_SIZE a
    page) and the chart thinned by the ledger (``career_series``), so the page reads a bounded
    number of match rows however long the career.
    """
    text = page_text(request)
    svc = service(request)
    try:
        player_id = check_id("player_id", player_id)  # the one id rule: NFC, refused characters
    except ValidationError:
        message = text.gettext("No player with the id “{id}”.", id=player_id)
        return _error_page(request, text, message, status_code=422, query=player_id)
    try:
        player = as_mapping(svc.get_player(player_id))
    except (NotFoundError, ValidationError):
        message = text.gettext("No player with the id “{id}”.", id=player_id)
        return _error_page(request, text, message, status_code=404, query=player_id)
    size = HISTORY_PAGE_SIZE
    played = int(player["matches_played"])
    pages = max(1, -(-played // size))
    # The oldest page holds what is left over (as the newest pages are full): its first link is
    # ?after=0 and reads that many, so paging on from it stays on the same page boundaries.
    limit = played - (pages - 1) * size if after == 0 else size
    try:
        shown, has_older, newer = svc.career_page(player_id, max(1, limit), before=before, after=after)
    except ValidationError as exc:
        message = text.gettext("This page link is not valid ({reason}).", reason=str(exc))
        return _error_page(request, text, message, status_code=400)
    if not shown and (before is not None or after is not None):
        message = text.gettext("This page link is not valid ({reason}).", reason="no matches there")
        return _error_page(request, text, message, status_code=404)
    with suppress(SedmaEloError):
        around = as_mapping(svc.around(player_id, 0))
        player["rank"] = around["items"][0]["rank"] if around["items"] else None
    player.setdefault("rank", None)
    threshold = provisional_matches(request)
    player["provisional"] = is_provisional(played, threshold)
    summary = svc.career_summary(player_id)
    rows = [match_row(found, player_id) for found in shown]
    points = chart_points(svc.career_series(player_id, MAX_POINTS - 1, RANGES[span]), RANGES[span], text)

    def marker_label(point: ChartPoint) -> str:
        # Only the markers drawn (at most MAX_MARKERS) are labelled: formatting a date in the
        # reader's locale for each of 10,000 points cost more than the rest of the page.
        return text.gettext(
            "match {number} ({date}): {rating}",
            number=text.integer(point.index),
            date=text.day(point.when) if point.when else point.match_id,
            rating=point.rating,
        )

    charts = [
        build_chart(
            points, frame=frame, provisional=threshold, date_label=text.skeleton, marker_label=marker_label
        )
        for frame in (WIDE, NARROW)
    ]
    page = newer // size + 1
    return _page(
        request,
        text,
        "player.html",
        player=player,
        rows=rows,
        career=Career.of(summary),
        chart=charts[0],
        chart_narrow=charts[1],
        chart_range=span,
        range_links=[
            (key, text.with_query(range=None if key == "all" else key, before=None, after=None))
            for key in RANGES
        ],
        threshold=threshold,
        first_played=summary.first_played,
        last_played=summary.last_played,
        newer_url=None if not newer else text.with_query(after=str(shown[0].sequence), before=None),
        older_url=None if not has_older else text.with_query(before=str(shown[-1].sequence), after=None),
        newest_url=text.with_query(before=None, after=None),
        oldest_url=text.with_query(after="0", before=None),
        page=min(page, pages),
        pages=pages,
        base=player_path(player_id),
    )


# ---------------------------------------------------------------------------- match
@router.get("/matches/{match_id:path}", response_class=HTMLResponse)
def match_page(request: Request, match_id: str) -> Response:
    """Every player's change in one match, winner first, explained in plain words and numbers."""
    text = page_text(request)
    svc = service(request)
    try:
        view = as_mapping(svc.get_match(match_id))
    except (NotFoundError, ValidationError):
        waiting = pending_game(request, match_id)
        if waiting is not None:  # posted as a game record: its match exists once it is analysed
            message = text.gettext(
                "The game “{id}” is being analysed; its match appears here once it is rated.", id=match_id
            )
            title = text.gettext("Being analysed")
            return _page(request, text, "not_found.html", message=message, query="", title=title)
        message = text.gettext("No match with the id “{id}”.", id=match_id)
        return _error_page(request, text, message, status_code=404)
    body = view["match"]
    rules = None
    with suppress(SedmaEloError, AttributeError):
        rules = svc.active_version().rules
    changes = winner_first(changes_of(view), body.get("winner"))
    alternatives = what_if(body, changes, rules) if rules is not None else {}
    found = analysed_game(request, match_id)
    game = game_view(found[0], found[1], text) if found is not None else None
    players = []
    for raw in changes:
        change = normalized(raw, text.tr)
        sentences = change["sentences"]
        if change["from_explain"] and sentences:
            # The core's first sentence is the summary ("alice won against ...: +26").
            headline, sentences = sentences[0], sentences[1:]
        else:
            headline = ""
        players.append(
            {
                "change": change,
                "headline": headline,
                "sentences": sentences,
                "what_if": alternatives.get(change["player_id"], {}),
                "bad_links": game["links"].get(change["player_id"], []) if game else [],
            }
        )
    return _page(
        request,
        text,
        "match.html",
        match=view,
        winners=_winners(body),
        players=players,
        game=game,
        rounding=getattr(rules, "rounding", "half_even"),
        rules_label=view["ratings_version"]["rules"],
    )


def _winners(body: Mapping[str, Any]) -> list[str]:
    """The winning side's players (empty for a draw)."""
    team_a, team_b = sides_of(body)
    return list({"a": team_a, "b": team_b}.get(str(body.get("winner")), ()))


# ---------------------------------------------------------------------------- static files
@router.get("/static/{name}")
def static_file(name: str) -> Response:
    """The pages' stylesheet (only files listed in _STATIC are served)."""
    media_type = _STATIC.get(name)
    if media_type is None:
        return Response("not found", status_code=404, media_type="text/plain")
    body = resources.files("sedma_elo.web").joinpath("static", name).read_bytes()
    return Response(body, media_type=media_type, headers={"Cache-Control": "public, max-age=3600"})
