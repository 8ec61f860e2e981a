"""Liveness (``/healthz``) and readiness (``/readyz``)."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import Response

from ..deps import DatabaseDep, LedgerDep
from ..schemas import json_response

__all__ = ["router"]

router = APIRouter(tags=["meta"])
_log = logging.getLogger(__name__)


@router.get("/healthz")
def health(ledger: LedgerDep) -> Response:
    """Liveness: the database answers."""
    return json_response({"status": "ok", "ledger_size": ledger.ledger_size()})


@router.get(
    "/readyz",
    responses={503: {"description": "not ready: the database cannot be reached"}},
)
def ready(db: DatabaseDep) -> Response:
    """Readiness: 200 while the database answers a query, 503 (JSON) while it cannot be reached."""
    try:
        db.ping()
    except Exception as exc:  # any failure to reach the database means "not ready", never a 500
        _log.warning("not ready: %s", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return json_response({"status": "not ready", "detail": "the database cannot be reached"}, 503)
    return json_response({"status": "ready"})
