"""Prometheus metrics of the service (``prometheus-client``), served at ``GET /metrics``.

The metric objects live in the process's default registry, once per process, whatever number of
apps a process builds. With several API processes (``serve --workers N``) the CLI points
``PROMETHEUS_MULTIPROC_DIR`` at a fresh directory and every scrape reports the sum over all live
processes (``prometheus_client``'s multiprocess mode); the ledger size is read from the database
at each scrape.

Names (all ``sedma_elo_``): ``http_requests_total`` and ``http_request_duration_seconds`` by
method, route template and status; ``matches_applied_total``; ``write_batch_size``;
``write_queue_depth``; ``ledger_matches``; ``game_backlog`` (game records waiting for or in their
analysis, read from the database at each scrape); ``database_errors_total``; ``webhook_backlog`` (events
not yet delivered, summed over subscriptions, read from the database at each scrape) and
``webhook_deliveries_total`` by outcome; ``index_faults`` (indexes and keys missing, unusable or not as
``storage/schema.py`` declares them, read from the catalogs at each scrape: alert when above 0).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from ...storage import index_faults
from ..api.responses import errors

__all__ = [
    "BATCH_SIZE",
    "DATABASE_ERRORS",
    "GAME_BACKLOG",
    "INDEX_FAULTS",
    "LEDGER_MATCHES",
    "MATCHES_APPLIED",
    "MULTIPROC_ENV",
    "REQUESTS",
    "REQUEST_SECONDS",
    "WEBHOOK_BACKLOG",
    "WEBHOOK_DELIVERIES",
    "WRITER_RESTARTS",
    "WRITE_QUEUE",
    "count_database_errors",
    "record_batch",
    "router",
]

#: The environment variable of prometheus-client's multiprocess mode.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# The *_created series (a start time per labelled child) double the output for no alert anyone uses.
disable_created_metrics()  # type: ignore[no-untyped-call]

REQUESTS = Counter(
    "sedma_elo_http_requests",
    "HTTP requests answered, by method, route template and status code",
    ["method", "route", "status"],
)
REQUEST_SECONDS = Histogram(
    "sedma_elo_http_request_duration_seconds",
    "Time from the request's arrival to the end of its answer, by method, route template and status",
    ["method", "route", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
MATCHES_APPLIED = Counter("sedma_elo_matches_applied", "Matches applied to the ledger by the API writer")
BATCH_SIZE = Histogram(
    "sedma_elo_write_batch_size",
    "Matches committed per group-commit transaction of the API writer",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096),
)
WRITE_QUEUE = Gauge(
    "sedma_elo_write_queue_depth",
    "Matches waiting for the API writer (summed over live processes)",
    multiprocess_mode="livesum",
)
LEDGER_MATCHES = Gauge(
    "sedma_elo_ledger_matches",
    "Matches in the ledger, voided ones included (read from the database at each scrape)",
    multiprocess_mode="livemax",
)
GAME_BACKLOG = Gauge(
    "sedma_elo_game_backlog",
    "Game records queued for analysis or being analysed (read from the database at each scrape)",
    multiprocess_mode="livemax",
)
INDEX_FAULTS = Gauge(
    "sedma_elo_index_faults",
    "Indexes and keys missing, unusable or not as declared (sedma-elo verify names them; read from"
    " the catalogs at each scrape)",
    multiprocess_mode="livemax",
)
WRITER_RESTARTS = Counter(
    "sedma_elo_writer_restarts",
    "Writer processes started again after one stopped unasked (its writes in flight got 503)",
)
DATABASE_ERRORS = Counter(
    "sedma_elo_database_errors",
    "Errors raised by the database driver (connection losses, timeouts, failed statements)",
)

WEBHOOK_BACKLOG = Gauge(
    "sedma_elo_webhook_backlog",
    "Change-feed events not yet delivered, summed over webhook subscriptions (read at each scrape)",
    multiprocess_mode="livemax",
)
WEBHOOK_DELIVERIES = Counter(
    "sedma_elo_webhook_deliveries",
    "Webhook POSTs by outcome: delivered (a 2xx answer) or failed (to be retried)",
    ["outcome"],
)


def record_batch(size: int, applied: int) -> None:
    """Count one committed writer batch of ``size`` submissions, ``applied`` of them new matches."""
    BATCH_SIZE.observe(size)
    MATCHES_APPLIED.inc(applied)


def _on_database_error(_context: Any) -> None:
    DATABASE_ERRORS.inc()


def count_database_errors() -> None:
    """Count every DBAPI error of every SQLAlchemy engine of this process (idempotent)."""
    if not event.contains(Engine, "handle_error", _on_database_error):
        event.listen(Engine, "handle_error", _on_database_error)


router = APIRouter(tags=["meta"])


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Prometheus text format"},
        **errors(),
    },
)
def metrics(request: Request) -> Response:
    """The service's metrics in Prometheus text format (for a Prometheus scrape; no key needed)."""
    ledger = getattr(request.app.state, "ledger", None)
    if ledger is not None:
        # With the database down the other metrics are still served (and the error is counted).
        with contextlib.suppress(SQLAlchemyError):
            LEDGER_MATCHES.set(ledger.ledger_size())
            WEBHOOK_BACKLOG.set(ledger.webhook_backlog())
            with ledger.db.read.connect() as conn:
                INDEX_FAULTS.set(len(index_faults(conn)))
    games = getattr(request.app.state, "games", None)
    if games is not None:
        with contextlib.suppress(SQLAlchemyError):
            GAME_BACKLOG.set(games.backlog())
    registry: CollectorRegistry = REGISTRY
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
