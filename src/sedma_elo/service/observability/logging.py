"""Logging for ``sedma-elo serve``: text or JSON lines on stderr, request ids, no secrets.

:func:`log_config` is a :func:`logging.config.dictConfig` dictionary that the CLI applies and hands
to uvicorn (whose worker processes apply it too), so uvicorn's own messages share the format.
Every line passes :func:`redact` last: API keys (``sk_...``) and passwords in URLs never reach the
log, whatever a message or a traceback contains.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from .request_id import current_request_id

__all__ = [
    "ACCESS_LOGGER",
    "LOGGER",
    "JsonFormatter",
    "LogFormat",
    "RequestIdFilter",
    "TextFormatter",
    "log_config",
    "redact",
    "safe_url",
]

LogFormat = Literal["text", "json"]

#: The service's logger; the access log is its child.
LOGGER = "sedma_elo.service"
ACCESS_LOGGER = "sedma_elo.service.access"

_KEY = re.compile(r"sk_[A-Za-z0-9_\-]{4,}")
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s\"']*):[^@\s\"']*@")
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',]+")

#: Attributes every LogRecord has; anything else on a record is an ``extra`` field.
_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}


def redact(text: str) -> str:
    """``text`` with API keys, bearer tokens and URL passwords replaced by ``***``."""
    text = _KEY.sub("sk_***", text)
    text = _BEARER.sub(r"\1***", text)
    return _URL_PASSWORD.sub(r"\g<head>:***@", text)


def safe_url(url: str) -> str:
    """A database URL fit for a log: the password masked (the whole URL redacted if unparsable)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return redact(url)


class RequestIdFilter(logging.Filter):
    """Stamp each record with the current request's id (``request_id``, ``None`` outside one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id()
        return True


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class TextFormatter(logging.Formatter):
    """``time level logger [request id] message key=value...``, redacted."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        extras = _extras(record)
        rid = extras.pop("request_id", None)
        parts = [stamp.replace("+00:00", "Z"), record.levelname, record.name]
        if rid:
            parts.append(f"[{rid}]")
        parts.append(record.getMessage())
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return redact(line)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time``, ``level``, ``logger``, ``message``, ``request_id``, extras.

    An exception's traceback goes in ``exc_info`` as text.
    """

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        data: dict[str, Any] = {
            "time": stamp.replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        data.update(_extras(record))
        data.setdefault("request_id", None)
        if record.exc_info:
            data["exc_info"] = self.formatException(record.exc_info)
        return redact(json.dumps(data, default=str, ensure_ascii=False))


def log_config(fmt: LogFormat = "text") -> dict[str, Any]:
    """The dictConfig for ``fmt``: the service's and uvicorn's loggers to stderr, INFO and above.

    uvicorn lowers its own loggers to its ``log_level`` afterwards; the access log is written by the
    service's middleware (``--access-log``), not by uvicorn.
    """
    formatter = JsonFormatter if fmt == "json" else TextFormatter
    handler = {
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
        "formatter": "main",
        "filters": ["request_id"],
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": f"{__name__}.RequestIdFilter"}},
        "formatters": {"main": {"()": f"{formatter.__module__}.{formatter.__qualname__}"}},
        "handlers": {"stderr": handler},
        "loggers": {
            "sedma_elo": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }
