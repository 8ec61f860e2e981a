"""The reader's language on the pages: chosen by ``?lang=``, then a cookie, then ``Accept-Language``.

A page opened with a valid ``?lang=xx`` remembers it in the ``lang`` cookie (a year), so the language
switch on every page sticks. :class:`PageText` is what the templates print with: gettext, plural
forms, and dates and numbers in the reader's locale (Babel).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode

from babel import Locale
from babel.dates import format_date, format_skeleton, format_time
from babel.numbers import format_decimal
from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import URL

from ..core.sentences import Translator
from ..i18n import LANGUAGES, babel_locale, negotiate, normalize, translations

__all__ = ["COOKIE", "PageText", "is_date_only", "page_text", "parse_moment", "remember_language"]

COOKIE = "lang"
_MINUS = "\u2212"


def parse_moment(value: datetime | str | None) -> datetime | None:
    """A stored ``played_at`` (ISO 8601 text or a datetime) as an aware UTC datetime; ``None`` if unknown."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def is_date_only(value: datetime | str | None) -> bool:
    """True for a match known by its day only: a date without a time, or exactly midnight UTC.

    Histories imported from files (``sedma-elo import``, the ATP sample) carry dates only and are
    stored at 00:00 UTC; a page shows such a match as a date, never as an invented "12:00 AM".
    """
    if isinstance(value, str) and len(value.strip()) == 10:
        return True
    moment = parse_moment(value)
    return moment is not None and (moment.hour, moment.minute, moment.second, moment.microsecond) == (
        0,
        0,
        0,
        0,
    )


@dataclass(frozen=True)
class PageText:
    """One reader's language: the catalog, the Babel locale and the formatters templates use."""

    lang: str
    tr: Translator
    locale: Locale
    url: URL

    # ------------------------------------------------------------------ words
    def gettext(self, message: str, **fields: Any) -> str:
        """``message`` translated, its ``{fields}`` filled in."""
        text = self.tr.gettext(message)
        return text.format(**fields) if fields else text

    def ngettext(self, singular: str, plural: str, n: int, **fields: Any) -> str:
        """The plural form for ``n`` translated; ``{n}`` is the count in the reader's locale."""
        return self.tr.ngettext(singular, plural, n).format(n=self.integer(n), **fields)

    # ------------------------------------------------------------------ numbers and dates
    def integer(self, value: int | None) -> str:
        """A count with the locale's grouping (``1,034`` / ``1.034``); an en dash for none.

        Ratings are printed as they are (``1034``), like years: see :meth:`rating`.
        """
        if value is None:
            return "\u2013"
        return _grouped(value, self.lang)

    def rating(self, value: float | None) -> str:
        """A rating (or a side's mean rating) rounded to an integer, without grouping."""
        return "\u2013" if value is None else str(round(value)).replace("-", _MINUS)

    def decimal(self, value: float | None, digits: int = 2) -> str:
        """``value`` with exactly ``digits`` decimals in the locale (``0.36`` / ``0,36``)."""
        if value is None:
            return "\u2013"
        pattern = "0." + "0" * digits if digits else "0"  # no grouping: these are ratings and scores
        text = format_decimal(value, format=pattern, locale=self.locale, decimal_quantization=True)
        text = text.replace("-", _MINUS)
        return text.lstrip(_MINUS) if text.lstrip(_MINUS).strip("0,.\u00a0 ") == "" else text

    def signed(self, value: float | None, digits: int = 0) -> str:
        """Like :meth:`decimal` with a ``+`` on positive values (zero has no sign)."""
        text = self.integer(int(value)) if digits == 0 and value is not None else self.decimal(value, digits)
        if value is not None and round(value, digits) > 0:
            return "+" + text
        return text

    def day(self, value: datetime | date | str | None, form: str = "medium") -> str:
        """The date of ``value`` in the locale (``1 Dec 2026`` / ``01.12.2026``)."""
        moment = parse_moment(value) if not isinstance(value, date) or isinstance(value, datetime) else value
        if moment is None:
            return "\u2013"
        return format_date(moment, form, locale=self.locale)

    def moment(self, value: datetime | str | None) -> str:
        """Date and time in UTC, or the date alone for a date-only match (:func:`is_date_only`)."""
        parsed = parse_moment(value)
        if parsed is None:
            return "\u2013"
        if is_date_only(value):
            return format_date(parsed, "medium", locale=self.locale)
        clock = format_time(parsed, "short", tzinfo=UTC, locale=self.locale)
        return f"{format_date(parsed, 'medium', locale=self.locale)} {clock} UTC"

    def skeleton(self, value: date, skeleton: str) -> str:
        """``value`` by a CLDR skeleton (``yMMM`` gives "Dec 2026", "12月 2026" ...)."""
        return format_skeleton(skeleton, value, locale=self.locale)

    # ------------------------------------------------------------------ links
    def switch_links(self) -> list[tuple[str, str, str, bool]]:
        """(code, name in itself, this page in that language, is it the current one) for each language."""
        return [
            (code, name, self.with_query(lang=code), code == self.lang) for code, name in LANGUAGES.items()
        ]

    def with_query(self, **changes: str | None) -> str:
        """A link to this page with its query changed (``None`` removes a parameter).

        The link is relative (``?lang=de&page=2``), so it stays right behind any path prefix.
        """
        params = dict(parse_qsl(self.url.query, keep_blank_values=True))
        for key, value in changes.items():
            if value is None:
                params.pop(key, None)
            else:
                params[key] = value
        return "?" + urlencode(params)


@lru_cache(maxsize=8192)
def _grouped(value: int, lang: str) -> str:
    """``value`` grouped as ``lang`` groups it (Babel is slow enough per call to be worth caching)."""
    return format_decimal(value, locale=babel_locale(lang)).replace("-", _MINUS)


def page_text(request: Request) -> PageText:
    """The language of ``request``: ``?lang=``, else the ``lang`` cookie, else ``Accept-Language``."""
    lang = negotiate(
        request.query_params.get("lang"),
        request.cookies.get(COOKIE),
        accept_language=request.headers.get("accept-language"),
    )
    return PageText(lang, translations(lang), babel_locale(lang), request.url)


def remember_language(request: Request, response: Response) -> Response:
    """Store a valid ``?lang=`` of ``request`` in the cookie of ``response`` (then it sticks)."""
    chosen = normalize(request.query_params.get("lang"))
    if chosen and chosen != request.cookies.get(COOKIE):
        response.set_cookie(COOKIE, chosen, max_age=365 * 24 * 3600, samesite="lax", httponly=True)
    return response
