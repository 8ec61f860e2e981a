"""The HTTP API: ``create_app(settings)`` assembles the FastAPI application from :mod:`.api`.

Routes only translate between HTTP and the service layer (:class:`~sedma_elo.service.ledger.Ledger`
and :mod:`~sedma_elo.service.auth`); the mapping from the project's errors to status codes lives in
:mod:`.api.errors` and nowhere else. Nothing here changes the process (see :mod:`.runtime`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import Response
from fastapi.routing import APIRoute
from starlette.types import Receive, Scope, Send

from ..storage import WAL_BOUND_PAGES, Database, WalCheckpointer, index_faults, normalize_url, open_database
from ..storage.urls import sqlite_path
from ..web import router as web_pages
from . import runtime
from .api.asgi import BodyLimit, DirectRoute
from .api.deps import Services
from .api.errors import StorageFaults, install_error_handlers
from .api.read_cache import ReadCache
from .api.routes import ROUTERS, matches
from .api.routes.matches import post_match, write_match
from .api.schemas import RULES_BODY_BYTES
from .auth import FailureLimiter, KeyCache, KeyGuard, MissCache, RateLimiter, create_key
from .career_store import CareerStorer
from .docs_ui import router as docs_ui_router
from .games import GAME_BODY_BYTES, GameStore
from .ledger import Ledger
from .observability import install_observability
from .reads import GameReads, PageReads
from .settings import ServiceSettings
from .webhooks import Deliverer
from .writer import GroupWriter, Submitter
from .writer_process import ProcessWriter, WriterConfig

__all__ = ["app_from_env", "create_app", "writer_config"]

_log = logging.getLogger(__name__)


class _ServiceApp(FastAPI):
    """FastAPI with ``POST /v1/matches`` served by a :class:`DirectRoute` before everything else.

    The router's ``post_match`` still declares the endpoint, so the OpenAPI schema documents it.
    FastAPI's telemetry hooks, if configured, do not see the direct route. The hot reads go through
    the :class:`ReadCache` (``read_cache_size`` > 0), which answers what it kept and passes the rest on.
    """

    direct: DirectRoute | None = None
    #: The hot reads' answers, once the lifespan started the ledger (None: off or not started).
    cached: ReadCache | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        direct = self.direct
        if direct is not None and direct.matches(scope):
            await direct.serve(scope, receive, send)
            return
        cached = self.cached
        if cached is not None and cached.handles(scope):
            await cached.serve(scope, receive, send, super().__call__)
            return
        await super().__call__(scope, receive, send)


def _operation_id(route: APIRoute) -> str:
    return route.name


def _checkpoint_seconds(settings: ServiceSettings) -> float:
    """Seconds between the WAL checkpoints of this process's thread (0: none; PostgreSQL, memory)."""
    return settings.wal_checkpoint_seconds if sqlite_path(normalize_url(settings.database_url)) else 0


def _wal_bound(settings: ServiceSettings) -> int | None:
    """The writers' ``wal_autocheckpoint`` beside that thread, or None for SQLite's own."""
    return WAL_BOUND_PAGES if _checkpoint_seconds(settings) else None


def writer_config(settings: ServiceSettings) -> WriterConfig | None:
    """What a writer process for ``settings`` needs, or None when writes stay on a thread
    (``writer_process`` off, or an in-memory SQLite database, which lives in one process only)."""
    url = normalize_url(settings.database_url)
    if not settings.writer_process or (sqlite_path(url) is None and url.startswith("sqlite")):
        return None
    return WriterConfig(
        settings.database_url,
        settings.max_batch,
        pool_size=settings.pool_sizes().writer,
        wal_bound=_wal_bound(settings),
        cpus=settings.writer_cpus,
    )


def _writer(settings: ServiceSettings, ledger: Ledger) -> Submitter:
    """The writer of this process: a writer process (its own, or ``serve``'s shared one) or threads."""
    config = writer_config(settings)
    if config is None:
        return GroupWriter(
            ledger,
            settings.max_batch,
            settings.writer_threads,
            max_queue=settings.write_queue,
            timeout=settings.write_timeout,
        )
    shared = None
    if settings.writer_address is not None and settings.writer_authkey is not None:
        shared = (settings.writer_address, bytes.fromhex(settings.writer_authkey.get_secret_value()))
    return ProcessWriter(
        config, ledger, max_queue=settings.write_queue, timeout=settings.write_timeout, shared=shared
    )


def _start(settings: ServiceSettings) -> Services:
    """Open the database (migrated, with a first ratings version) and start the writer."""
    pools = settings.pool_sizes()
    db = open_database(
        settings.database_url,
        pool_size=pools.engine,
        fast_pool_size=pools.fast,
        max_overflow=pools.overflow,
        wal_bound=_wal_bound(settings),
    )
    ledger = Ledger(db, async_connections=settings.reader_connections())
    ledger.ensure_version()
    _warn_index_faults(db)
    if settings.admin_key is not None:
        create_key(db, "admin", "bootstrap", secret=settings.admin_key.get_secret_value())
    writer = _writer(settings, ledger)
    writer.start()
    guard = KeyGuard(
        db,
        RateLimiter(settings.rate_limit, settings.rate_burst),
        KeyCache(settings.key_cache_seconds),
        FailureLimiter(settings.failed_auth_rate, settings.failed_auth_burst),
        MissCache(settings.unknown_key_cache_seconds),
    )
    checkpointer = None
    if every := _checkpoint_seconds(settings):
        path = sqlite_path(normalize_url(settings.database_url))
        assert path is not None  # _checkpoint_seconds is 0 for anything but a SQLite file
        checkpointer = WalCheckpointer(path, every)
        checkpointer.start()
    return Services(settings, db, ledger, writer, guard, CareerStorer(ledger), checkpointer)


def _warn_index_faults(db: Database) -> None:
    """Log a warning for each index or key at fault (:func:`~sedma_elo.storage.index_faults`): the
    service answers as before, but the reads that need that index scan a table (seconds at scale)."""
    with db.read.connect() as conn:
        for fault in index_faults(conn):
            _log.warning("%s", fault)


def _start_deliverer(services: Services) -> Deliverer | None:
    """The webhook delivery thread of this process, started (None when ``webhooks`` is off)."""
    settings = services.settings
    if not settings.webhooks:
        return None
    deliverer = Deliverer(
        services.db,
        poll=settings.webhook_poll,
        timeout=settings.webhook_timeout,
        retry_base=settings.webhook_retry_base,
        retry_max=settings.webhook_retry_max,
        lease=settings.webhook_lease,
    )
    deliverer.start()
    return deliverer


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    """Build the API for ``settings`` (defaults: SQLite ``./sedma-elo.db``, environment overrides).

    The database is opened, migrated and given a first ratings version when the app starts.

    Raises:
        ValidationError: the settings are insecure (see :meth:`ServiceSettings.check_secure`).
    """
    settings = settings or ServiceSettings()
    settings.check_secure()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = _start(settings)
        app.state.services = services
        reads: PageReads = services.ledger  # what the HTML pages read through
        app.state.reads = reads
        app.state.provisional_matches = settings.provisional_matches
        app.state.ledger = services.ledger  # for tests and tools that drive the ledger of a running app
        games: GameReads = GameStore(services.db)  # the match page's game and the backlog metric
        app.state.games = games
        deliverer = _start_deliverer(services)
        if settings.read_cache_size and isinstance(app, _ServiceApp):
            app.cached = ReadCache(
                services.ledger,
                size=settings.read_cache_size,
                seconds=settings.read_cache_seconds,
                provisional_matches=settings.provisional_matches,
                metrics=settings.metrics,
                access_log=settings.access_log,
            )
        runtime.after_startup()
        try:
            yield
        finally:
            if isinstance(app, _ServiceApp):
                app.cached = None
            if deliverer is not None:
                deliverer.stop()
            services.writer.stop()
            services.careers.stop()
            if services.checkpointer is not None:
                services.checkpointer.stop()
            services.guard.close()
            await services.ledger.reader.close()
            services.db.dispose()

    app = _ServiceApp(
        title="sedma-elo rating service",
        version="1",
        summary="A match ledger for Sedma ratings: each match applied once, in order, explained.",
        lifespan=lifespan,
        docs_url=None,  # served from the package's files by docs_ui_router (no CDN)
        redoc_url=None,
        # operationId = the route function's name (get_player, not get_player_v1_players__player_id__get):
        # the names of a generated client's functions.
        generate_unique_id_function=_operation_id,
    )
    app.add_middleware(
        BodyLimit,
        limit=settings.max_body_bytes,
        larger={"/v1/admin/rules": RULES_BODY_BYTES, "/v1/games": GAME_BODY_BYTES},
    )
    app.add_middleware(StorageFaults)  # around every route: a full disk or a lost database -> 503
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(web_pages)
    app.include_router(docs_ui_router)

    async def direct_write(scope: Scope, raw: bytes) -> Response:
        services: Services = app.state.services
        client = scope.get("client")
        address = client[0] if client else None
        return await write_match(services.guard, services.writer, scope["headers"], raw, address)

    # POST /v1/matches is declared once, by the router (what OpenAPI documents); the direct route
    # takes its method and path from that declaration and serves it in front of FastAPI's stack,
    # which cost 30% of write throughput on SQLite (benchmarks/bench_write_paths.py).
    declared = next(r for r in matches.router.routes if isinstance(r, APIRoute) and r.endpoint is post_match)
    app.direct = DirectRoute.of(declared, settings.max_body_bytes, direct_write)
    install_observability(app, settings)  # after app.direct: it wraps the direct write route too
    return app


def app_from_env() -> FastAPI:
    """The app configured from ``SEDMA_ELO_*`` variables (what ``serve --workers N`` runs in each process).

    This is a serving entry point, so it also tunes the process (:func:`runtime.tune_process`).
    """
    runtime.tune_process(freeze=True)
    return create_app(ServiceSettings())
