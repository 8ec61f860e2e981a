"""What ``sedma-elo serve`` does before uvicorn starts: logging, metrics directory, start-up line."""

from __future__ import annotations

import atexit
import logging
import logging.config
import os
import shutil
import tempfile
from typing import Any

from ..settings import ServiceSettings
from .logging import LOGGER, log_config, safe_url
from .metrics import MULTIPROC_ENV

__all__ = ["prepare_serve", "startup_message"]


def startup_message(settings: ServiceSettings, *, processes: int, rules: str) -> str:
    """The start-up line: URL, database (password hidden), active rules and processes."""
    base = f"http://{settings.host}:{settings.port}"
    plural = "es" if processes != 1 else ""
    return (
        f"sedma-elo serving {base} (docs {base}/docs, metrics {base}/metrics); "
        f"database {safe_url(settings.database_url)}; rules {rules}; {processes} process{plural}; "
        f"access log {'on' if settings.access_log else 'off'}"
    )


def prepare_serve(settings: ServiceSettings, *, processes: int, rules: str) -> dict[str, Any]:
    """Configure logging, give several processes a shared metrics directory, log the start-up line.

    Returns the logging dictConfig for ``uvicorn.run(log_config=...)``, so worker processes log
    alike. With ``processes > 1`` and no ``PROMETHEUS_MULTIPROC_DIR`` set, a fresh temporary one
    is set (inherited by the workers) and removed at exit.
    """
    config = log_config(settings.log_format)
    logging.config.dictConfig(config)
    if processes > 1 and not os.environ.get(MULTIPROC_ENV):
        directory = tempfile.mkdtemp(prefix="sedma-elo-metrics-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        os.environ[MULTIPROC_ENV] = directory
    logging.getLogger(LOGGER).info(
        startup_message(settings, processes=processes, rules=rules),
        extra={
            "url": f"http://{settings.host}:{settings.port}",
            "database": safe_url(settings.database_url),
            "rules": rules,
            "processes": processes,
            "access_log": settings.access_log,
        },
    )
    return config
