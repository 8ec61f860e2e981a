"""The Jinja2 environment of the web pages: templates inside the package, autoescaping, filters.

Every string a template prints is HTML-escaped (autoescape is on for every template), so a player id
such as ``<script>`` is shown as text. Pages carry a Content-Security-Policy that allows only the
package's own stylesheet and the one inline script below (by hash), as a second line of defence.
"""

from __future__ import annotations

import base64
import hashlib
import math
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from starlette.responses import HTMLResponse

from .lang import PageText, is_date_only

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "LOCAL_TIME_SCRIPT",
    "date_tag",
    "environment",
    "fmt_number",
    "fmt_signed",
    "iso_utc",
    "match_path",
    "player_path",
    "render_page",
    "time_tag",
]

MINUS = "\u2212"

#: Rewrites every ``<time datetime=...>`` that has a time of day into the viewer's time zone, in the
#: page's language; date-only matches keep the server's text (a day has no zone). Without JavaScript
#: the UTC text rendered on the server stays.
LOCAL_TIME_SCRIPT = (
    "document.querySelectorAll('time[datetime]:not([data-date-only])').forEach(function (t) {"
    " var d = new Date(t.getAttribute('datetime'));"
    " if (isNaN(d.getTime())) { return; }"
    " t.textContent = d.toLocaleString(document.documentElement.lang,"
    " {dateStyle: 'medium', timeStyle: 'short'});"
    " t.title = t.getAttribute('datetime');"
    " t.setAttribute('data-local', '1');"
    " });"
)
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(LOCAL_TIME_SCRIPT.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    "style-src 'self'; "
    "img-src 'self' data:; "
    f"script-src 'sha256-{_SCRIPT_HASH}'; "
    "form-action 'self'; "
    "base-uri 'none'; "
    "frame-ancestors 'none'"
)


def fmt_number(value: float | int | None, digits: int = 0) -> str:
    """A number with ``digits`` decimals and a real minus sign; ``None`` prints as an en dash."""
    if value is None:
        return "\u2013"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    text = f"{value:.{digits}f}"
    if text.startswith("-"):
        # "-0.00" after rounding is zero: show it without a sign.
        return text[1:] if float(text) == 0 else MINUS + text[1:]
    return text


def fmt_signed(value: float | int | None, digits: int = 0) -> str:
    """Like :func:`fmt_number` but positive values carry a ``+`` (zero has no sign)."""
    text = fmt_number(value, digits)
    if value is not None and not text.startswith(MINUS) and float(text) != 0:
        return "+" + text
    return text


def player_path(player_id: str) -> str:
    """The page path of a player (every character of the id percent-encoded, ``/`` too)."""
    return "/players/" + quote(player_id, safe="")


def match_path(match_id: str) -> str:
    """The page path of a match."""
    return "/matches/" + quote(match_id, safe="")


def iso_utc(value: datetime | str | None) -> str:
    """An ISO 8601 UTC timestamp ending in ``Z`` (naive datetimes are taken as UTC); ``""`` for none."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return ""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def time_tag(value: datetime | str | None, text: PageText | None = None) -> Markup:
    """``<time datetime="...">`` around the moment in the reader's words (an en dash when unknown).

    A date-only match (:func:`~sedma_elo.web.lang.is_date_only`) shows its date alone and is marked
    ``data-date-only`` so that the local-time script leaves it as it is. Without ``text`` the
    moment is written ``YYYY-MM-DD HH:MM UTC``.
    """
    iso = iso_utc(value)
    if not iso:
        return Markup("\u2013")
    date_only = is_date_only(value)
    if text is not None:
        shown = text.moment(value)
    else:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
        shown = moment.strftime("%Y-%m-%d" if date_only else "%Y-%m-%d %H:%M UTC")
    if date_only:
        return Markup('<time datetime="{}" data-date-only>{}</time>').format(iso[:10], shown)
    return Markup('<time datetime="{}">{}</time>').format(iso, shown)


def date_tag(value: datetime | str | None, text: PageText | None = None) -> Markup:
    """``<time>`` with the date alone (the day in UTC), for lists where the time of day is noise."""
    iso = iso_utc(value)
    if not iso:
        return Markup("\u2013")
    shown = text.day(value) if text is not None else iso[:10]
    return Markup('<time datetime="{}" data-date-only>{}</time>').format(iso[:10], shown)


def _build_environment() -> Environment:
    env = Environment(
        loader=PackageLoader("sedma_elo.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["num"] = fmt_number
    env.filters["signed"] = fmt_signed
    env.filters["player_path"] = player_path
    env.filters["match_path"] = match_path
    env.filters["time_tag"] = time_tag
    env.filters["date_tag"] = date_tag
    env.globals["local_time_script"] = LOCAL_TIME_SCRIPT
    return env


environment = _build_environment()


def render_page(
    template: str, context: dict[str, Any], *, text: PageText | None = None, status_code: int = 200
) -> HTMLResponse:
    """Render ``template`` with ``context`` into an HTML response with the pages' security headers.

    ``text`` is the reader's language: templates print through ``_``/``ngettext`` and ``t`` (its
    number and date formatters); English when it is ``None``.
    """
    if text is not None:
        context = {
            "t": text,
            "_": text.gettext,
            "gettext": text.gettext,
            "ngettext": text.ngettext,
            **context,
        }
    html = environment.get_template(template).render(**context)
    return HTMLResponse(
        html,
        status_code=status_code,
        headers={
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "same-origin",
            "Content-Language": text.lang if text is not None else "en",
            "Vary": "Accept-Language, Cookie",
        },
    )
