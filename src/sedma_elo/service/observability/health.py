"""Liveness and readiness probes: ``GET /livez`` and ``GET /readyz``.

``/livez`` answers 200 while the process serves HTTP at all (restart it when it does not).
``/readyz`` answers 200 when the database answers a query, else 503 with a JSON body saying why
(take the process out of the load balancer until it answers again). Neither needs a key.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from .logging import LOGGER

__all__ = ["router"]

router = APIRouter(tags=["meta"])

_NOT_READY: dict[int | str, dict[str, Any]] = {
    503: {"description": "the database cannot be reached; `detail` says why"}
}


@router.get("/livez")
def livez() -> JSONResponse:
    """Liveness: the process answers HTTP (the database is not consulted)."""
    return JSONResponse({"status": "ok"})


@router.get("/readyz", responses=_NOT_READY)
def readyz(request: Request) -> JSONResponse:
    """Readiness: the database answers ``SELECT 1``; 503 with ``{"status": "unavailable"}`` otherwise."""
    db = getattr(request.app.state, "db", None)
    if db is None:
        return JSONResponse({"status": "unavailable", "detail": "the app has not started"}, status_code=503)
    try:
        with db.read.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        logging.getLogger(LOGGER).warning("readiness check failed: %s", type(exc).__name__)
        detail = f"database unreachable ({type(exc).__name__})"
        return JSONResponse({"status": "unavailable", "detail": detail}, status_code=503)
    return JSONResponse({"status": "ok", "database": db.dialect})
