"""Probes: liveness (``/livez``, ``/healthz``) and readiness (``/readyz``). None needs a key.

``/livez`` answers while the process serves HTTP at all (restart it when it does not); ``/readyz``
answers 200 while the database answers a query and the writer takes writes, else 503 with a JSON
body (take the process out of the load balancer until it answers again); ``/healthz`` is the
older probe, with the ledger size.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import Response

from ..deps import DatabaseDep, LedgerDep, WriterDep
from ..responses import Health, Live, NotReady, Ready, errors
from ..schemas import json_response

__all__ = ["router"]

router = APIRouter(tags=["meta"])
_log = logging.getLogger(__name__)


@router.get("/livez", response_model=Live, responses=errors())
def live() -> Response:
    """Liveness: the process answers HTTP (the database is not consulted)."""
    return json_response({"status": "ok"})


@router.get("/healthz", response_model=Health, responses=errors())
def health(ledger: LedgerDep) -> Response:
    """Liveness: the database answers."""
    return json_response({"status": "ok", "ledger_size": ledger.ledger_size()})


@router.get(
    "/readyz",
    response_model=Ready,
    responses={
        **errors(),
        503: {
            "model": NotReady,
            "description": "not ready: the database cannot be reached, or the writer is starting again",
        },
    },
)
def ready(db: DatabaseDep, writer: WriterDep) -> Response:
    """Readiness: 200 while the database answers a query and the writer takes writes, else 503 (JSON)."""
    try:
        db.ping()
    except Exception as exc:  # any failure to reach the database means "not ready", never a 500
        _log.warning("not ready: %s", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        detail = f"the database cannot be reached ({type(exc).__name__})"
        return json_response({"status": "not ready", "detail": detail}, 503)
    if not writer.ready():
        detail = "the writer process is starting again; writes get 503 until it is back"
        return json_response({"status": "not ready", "detail": detail}, 503)
    return json_response({"status": "ready", "database": db.dialect})
