"""The languages of the pages, the API's explanations and the CLI: gettext catalogs read with Babel.

The catalogs are the ``.po`` files under ``locales/<lang>/LC_MESSAGES/messages.po`` (committed, edited
by hand, refreshed from the sources with ``make messages``). They are compiled in memory the first time
a language is asked for, so a fresh clone installed with ``pip install -e .`` needs no build step.
``messages.pot`` is the template the sources give; a test fails when a catalog lacks one of its messages.

This package imports nothing of the web or the service: the core's sentences take its translators.
"""

from __future__ import annotations

import io
from functools import cache
from importlib import resources
from typing import Any

from babel import Locale
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from ..errors import ValidationError

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "babel_locale",
    "catalog_text",
    "check_language",
    "localized_changes",
    "negotiate",
    "normalize",
    "translations",
]

#: The languages with a catalog, by code, each named in itself (for the language switch).
LANGUAGES: dict[str, str] = {
    "en": "English",
    "de": "Deutsch",
    "it": "Italiano",
    "es": "Español",
    "sk": "Slovenčina",
    "zh": "中文",
}
DEFAULT_LANGUAGE = "en"
#: Babel's locale of each language (Chinese is written in simplified characters).
_LOCALES = {"en": "en", "de": "de", "it": "it", "es": "es", "sk": "sk", "zh": "zh_Hans_CN"}


def catalog_text(lang: str) -> str:
    """The ``.po`` text of ``lang`` (English has none: its messages are the sources' own)."""
    path = resources.files(__name__).joinpath("locales", lang, "LC_MESSAGES", "messages.po")
    return path.read_text(encoding="utf-8")


@cache
def translations(lang: str) -> Translations:
    """The gettext catalog of ``lang`` (one of :data:`LANGUAGES`), compiled from its ``.po`` once.

    English, and any code without a catalog, gets the identity catalog (the messages as written).
    """
    if lang == DEFAULT_LANGUAGE or lang not in LANGUAGES:
        return Translations()
    catalog = read_po(io.StringIO(catalog_text(lang)), locale=_LOCALES[lang])
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled)


def check_language(field: str, code: str) -> str:
    """``code`` normalized to a language with a catalog (``de-AT`` -> ``de``).

    Raises:
        ValidationError: no catalog for ``code`` (the message names ``field``).
    """
    found = normalize(code)
    if found is None:
        raise ValidationError(field, f"must be one of {', '.join(LANGUAGES)}, got {code!r}")
    return found


@cache
def babel_locale(lang: str) -> Locale:
    """Babel's locale for dates and numbers in ``lang`` (English for an unknown code)."""
    return Locale.parse(_LOCALES.get(lang, DEFAULT_LANGUAGE))


def normalize(code: str | None) -> str | None:
    """The language of a tag such as ``de-AT`` or ``zh-Hans-CN`` if it has a catalog, else ``None``."""
    if not code:
        return None
    primary = code.strip().replace("_", "-").split("-")[0].lower()
    return primary if primary in LANGUAGES else None


def negotiate(*choices: str | None, accept_language: str | None = None) -> str:
    """The first of ``choices`` (``?lang=``, a cookie) with a catalog, else the best of ``Accept-Language``.

    ``accept_language`` is an HTTP header (``"de-CH, de;q=0.9, en;q=0.5"``); malformed parts are
    skipped. Falls back to English.
    """
    for choice in choices:
        found = normalize(choice)
        if found:
            return found
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        found = normalize(tag)
        if found and quality > 0:
            ranked.append((-quality, position, found))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE


def localized_changes(changes: list[dict[str, Any]], lang: str) -> list[dict[str, Any]]:
    """Explanation objects (``change_to_dict``) with their ``explanation`` sentences in ``lang``.

    English objects are returned as they are; an object of another shape keeps its sentences.
    """
    if lang == DEFAULT_LANGUAGE or lang not in LANGUAGES:
        return changes
    from ..core.explain import explain_change  # the core is below this package: imported on use

    tr = translations(lang)
    out = []
    for change in changes:
        try:
            out.append({**change, "explanation": explain_change(change, translator=tr)})
        except (KeyError, TypeError):
            out.append(change)
    return out
