"""The HTTP API: ``create_app(settings)`` builds the FastAPI application.

Routes only translate between HTTP and the service layer (:class:`~sedma_elo.service.ledger.Ledger`
and :mod:`~sedma_elo.service.keys`); the mapping from the project's errors to status codes lives in
:func:`_install_error_handlers` and nowhere else.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError
from starlette.datastructures import Headers, State
from starlette.types import Receive, Scope, Send

from ..core.provisional import is_provisional
from ..core.rules import rules_from_toml
from ..errors import (
    AuthError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SedmaEloError,
    ValidationError,
)
from ..i18n import localized_changes, negotiate
from ..storage import open_database
from ..web import router as web_pages
from . import keys as keys_mod
from .asgi import BodyLimit, DirectRoute
from .docs_ui import router as docs_ui_router
from .keys import KeyInfo
from .keys import Scope as KeyScope
from .ledger import MAX_PAGE, MAX_RECENT, HistoryOrder, Ledger
from .observability import install_observability
from .payload import ID_PATTERN, MatchIn, submission_from_payload
from .settings import ServiceSettings
from .writer import GroupWriter

__all__ = ["app_from_env", "create_app"]

_QUERY_FIELDS = {"limit", "cursor", "span", "version", "order", "n", "players", "prefix"}

#: GIL switch interval (seconds) while the app runs; see the lifespan in :func:`create_app`.
_SWITCH_INTERVAL = 0.0001


class _RateLimiter:
    """A token bucket per API key, in this process only (N processes allow N times the rate)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._buckets: dict[int, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def check(self, key_id: int) -> None:
        if self.rate <= 0:
            return
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key_id, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                raise RateLimitError(
                    "rate limit exceeded for this API key", retry_after=(1.0 - tokens) / self.rate
                )
            self._buckets[key_id] = (tokens - 1.0, now)


#: Free text stored as given: PostgreSQL text cannot hold NUL, and no label needs a control character.
NO_CONTROL_CHARS = r"^[^\x00-\x1f\x7f]*$"


class _KeyCache:
    """Checked keys by hash for ``ttl`` seconds, so a hot writer does not look its key up every time."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._cache: dict[str, tuple[KeyInfo, float]] = {}

    def get(self, digest: str) -> KeyInfo | None:
        hit = self._cache.get(digest)
        if hit is None or hit[1] < time.monotonic():
            return None
        return hit[0]

    def put(self, digest: str, info: KeyInfo) -> None:
        if self.ttl > 0:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[digest] = (info, time.monotonic() + self.ttl)

    def clear(self) -> None:
        self._cache.clear()


# ---------------------------------------------------------------------------- documented bodies
class VoidIn(BaseModel):
    """Why a match is voided."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field("", max_length=500, pattern=NO_CONTROL_CHARS)


class RulesIn(BaseModel):
    """New rules (the TOML text of a rules file) to re-rate the whole ledger with."""

    model_config = ConfigDict(extra="forbid")
    rules_toml: str = Field(max_length=20_000)
    label: str | None = Field(None, min_length=1, max_length=200, pattern=NO_CONTROL_CHARS)
    activate: bool = True


class KeyIn(BaseModel):
    """A new API key's scope and a label to recognise it by."""

    model_config = ConfigDict(extra="forbid")
    scope: KeyScope
    label: str = Field("", max_length=200, pattern=NO_CONTROL_CHARS)


def _json(data: Any, status: int = 200) -> Response:
    return Response(
        json.dumps(data, separators=(",", ":")), status_code=status, media_type="application/json"
    )


def _error(status: int, detail: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _error_response(exc: SedmaEloError) -> JSONResponse:
    """The one place where the project's errors become status codes (both write paths use it)."""
    if isinstance(exc, ValidationError):
        where = "query" if exc.field in _QUERY_FIELDS else "body"
        return _error(
            422, [{"loc": [where, *exc.field.split(".")], "msg": exc.reason, "type": "value_error"}]
        )
    if isinstance(exc, ConflictError):
        return _error(409, str(exc))
    if isinstance(exc, NotFoundError):
        return _error(404, str(exc))
    if isinstance(exc, PermissionDeniedError):  # before AuthError: it is one
        return _error(403, str(exc))
    if isinstance(exc, AuthError):
        return _error(401, str(exc), {"WWW-Authenticate": "Bearer"})
    if isinstance(exc, RateLimitError):
        return _error(429, str(exc), {"Retry-After": str(max(1, round(exc.retry_after + 0.5)))})
    return _error(400, str(exc))


def _request_validation_response(exc: RequestValidationError) -> JSONResponse:
    errors = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors()
    ]
    return _error(422, errors)


def _install_error_handlers(app: FastAPI) -> None:
    """Route every project error and every request validation error to the shared mapping above."""

    @app.exception_handler(SedmaEloError)
    async def _project_error(_: Request, exc: SedmaEloError) -> JSONResponse:
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _request_validation_response(exc)


_bearer = HTTPBearer(auto_error=False, description="an API key: `Authorization: Bearer sk_...`")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
PlayerId = Annotated[str, Path(min_length=1, max_length=128, pattern=ID_PATTERN)]
MatchId = Annotated[str, Path(min_length=1, max_length=128, pattern=ID_PATTERN)]


def _authorize(
    request: Request, credentials: HTTPAuthorizationCredentials | None, scope: KeyScope
) -> KeyInfo:
    secret = credentials.credentials if credentials is not None else None
    return _authorize_secret(request.app.state, secret, scope)


def _bearer_secret(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (``None`` for another scheme)."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _authorize_secret(state: State, secret: str | None, scope: KeyScope) -> KeyInfo:
    """The key behind ``secret``, checked for ``scope`` and charged to its rate limit.

    Raises:
        AuthError: no key or an unknown one. PermissionDeniedError: the wrong scope.
        RateLimitError: the key's rate limit is used up.
    """
    if not secret:
        raise AuthError("an API key is required: send 'Authorization: Bearer sk_...'")
    digest = keys_mod.hash_key(secret)
    info: KeyInfo | None = state.key_cache.get(digest)
    if info is None:
        info = keys_mod.authenticate(state.db, secret)
        state.key_cache.put(digest, info)
    keys_mod.require_scope(info, scope)
    state.limiter.check(info.id)
    return info


async def _write_key(request: Request, credentials: Credentials) -> KeyInfo:
    return _authorize(request, credentials, "write")


def _admin_key(request: Request, credentials: Credentials) -> KeyInfo:
    return _authorize(request, credentials, "admin")


WriteKey = Annotated[KeyInfo, Depends(_write_key)]
AdminKey = Annotated[KeyInfo, Depends(_admin_key)]


class _ServiceApp(FastAPI):
    """FastAPI with ``POST /v1/matches`` served by a :class:`DirectRoute` before everything else.

    ``post_match`` in :func:`create_app` still declares the endpoint, so the OpenAPI schema
    documents it. FastAPI's telemetry hooks, if configured, do not see the direct route.
    """

    direct: DirectRoute | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        direct = self.direct
        if direct is not None and direct.matches(scope):
            await direct.serve(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    """Build the API for ``settings`` (defaults: SQLite ``./sedma-elo.db``, environment overrides).

    The database is opened, migrated and given a first ratings version when the app starts.

    Raises:
        ValidationError: the settings are insecure (see :meth:`ServiceSettings.check_secure`).
    """
    settings = settings or ServiceSettings()
    settings.check_secure()
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The writer thread gives up the GIL for every database call; with the default 5 ms switch
        # interval it then waits behind the busy event loop for up to 5 ms each time. 0.1 ms gave
        # PostgreSQL ~20% more writes/s than 0.5 ms (benchmarks/bench_service.py).
        old_interval = sys.getswitchinterval()
        sys.setswitchinterval(_SWITCH_INTERVAL)
        db = open_database(settings.database_url, pool_size=settings.pool_size)
        ledger = Ledger(db, async_connections=settings.pool_size)
        ledger.ensure_version()
        if settings.admin_key is not None:
            keys_mod.create_key(db, "admin", "bootstrap", secret=settings.admin_key.get_secret_value())
        writer = GroupWriter(ledger, settings.max_batch, settings.writer_threads)
        writer.start()
        state.update(db=db, ledger=ledger, writer=writer)
        # Full collections walking the long-lived start-up objects (modules, schemas, SQLAlchemy)
        # paused the event loop for tens of ms: p99 of match writes was 66 ms, 14 ms once frozen.
        # (No gc.collect() first: it costs a test process that starts many apps whole seconds.)
        gc.freeze()
        app.state.db = db
        app.state.ledger = ledger  # the service layer the HTML pages read through
        try:
            yield
        finally:
            writer.stop()
            await ledger.reader.close()
            db.dispose()
            gc.unfreeze()
            sys.setswitchinterval(old_interval)

    app = _ServiceApp(
        title="sedma-elo rating service",
        version="1",
        summary="A match ledger for Sedma ratings: each match applied once, in order, explained.",
        lifespan=lifespan,
        docs_url=None,  # served from the package's files by docs_ui_router (no CDN)
        redoc_url=None,
    )
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    _install_error_handlers(app)
    app.include_router(web_pages)
    app.include_router(docs_ui_router)
    app.state.limiter = _RateLimiter(settings.rate_limit, settings.rate_burst)
    app.state.key_cache = _KeyCache(settings.key_cache_seconds)
    app.state.provisional_matches = settings.provisional_matches

    def ledger() -> Ledger:
        found: Ledger = state["ledger"]
        return found

    # ------------------------------------------------------------------ matches
    @app.post(
        "/v1/matches",
        status_code=201,
        tags=["matches"],
        responses={
            200: {"description": "the same match_id with the same body again: the first answer, unchanged"},
            401: {"description": "no key or an unknown key"},
            403: {"description": "a key without the write scope"},
            409: {"description": "the match_id was used for a different match"},
            413: {"description": "request body too large"},
            422: {"description": "invalid body; `detail[].loc` names the field"},
            429: {"description": "rate limit of this key exceeded"},
        },
    )
    async def post_match(payload: MatchIn, _key: WriteKey) -> Response:
        """Apply a finished match exactly once; answer with its sequence and explained changes.

        Declares the endpoint for the schema; requests are served by ``write_match``.
        """
        return await apply_payload(payload)

    async def write_match(headers: Headers, raw: bytes) -> Response:
        # What DirectRoute serves for POST /v1/matches: key first, then the body. The answers equal
        # post_match's (tests/service/test_direct_route.py), except that malformed JSON without a
        # valid key gets 401 here, where FastAPI would parse first and answer 422.
        try:
            _authorize_secret(app.state, _bearer_secret(headers.get("authorization")), "write")
            try:
                payload = MatchIn.model_validate_json(raw)
            except PydanticValidationError as exc:
                raise RequestValidationError(
                    [
                        {**e, "loc": ("body", *e["loc"])}
                        for e in exc.errors(include_url=False, include_context=False)
                    ]
                ) from exc
            return await apply_payload(payload)
        except SedmaEloError as exc:
            return _error_response(exc)
        except RequestValidationError as exc:
            return _request_validation_response(exc)

    async def apply_payload(payload: MatchIn) -> Response:
        sub = submission_from_payload(payload)
        writer: GroupWriter = state["writer"]
        outcome = await writer.submit(sub)
        if outcome.error is not None:
            raise outcome.error
        if outcome.failure is not None:
            raise outcome.failure
        return Response(
            outcome.body,
            status_code=201 if outcome.status == "created" else 200,
            media_type="application/json",
        )

    app.direct = DirectRoute("POST", "/v1/matches", settings.max_body_bytes, write_match)

    @app.get("/v1/matches/{match_id}", tags=["matches"], responses={404: {"description": "unknown match"}})
    def get_match(
        match_id: MatchId,
        request: Request,
        lang: Annotated[str | None, Query(max_length=35, description="explanation language")] = None,
    ) -> Response:
        """The match, its sequence, the ratings version and the explanation of every change.

        The explanation sentences are in ``lang`` (en, de, it, es, sk, zh), else ``Accept-Language``.
        """
        view = ledger().get_match(match_id)
        chosen = negotiate(lang, accept_language=request.headers.get("accept-language"))
        return _json({**view, "changes": localized_changes(view["changes"], chosen)})

    # ------------------------------------------------------------------ players
    @app.get("/v1/players", tags=["players"])
    def search_players(
        prefix: Annotated[
            str,
            Query(
                min_length=1,
                max_length=128,
                pattern=r"^[^/\x00-\x1f\x7f]+$",
                description="the start of the player id (case-sensitive)",
            ),
        ],
        limit: Annotated[int, Query(ge=1, le=MAX_RECENT)] = 20,
    ) -> Response:
        """Players whose id starts with ``prefix``, by id, with their rating (active version)."""
        return _json({"items": ledger().search_players(prefix, limit)})

    @app.get("/v1/players/{player_id}", tags=["players"], responses={404: {"description": "unknown player"}})
    async def get_player(
        player_id: PlayerId,
        version: Annotated[
            int | None, Query(ge=1, le=2**31 - 1, description="ratings version (default: active)")
        ] = None,
    ) -> Response:
        """A player's rating, number of matches and last sequence in the active (or given) version."""
        # Hot path: one indexed lookup, awaited (the loop serves others while PostgreSQL answers).
        record = await ledger().get_player_async(player_id, version)
        provisional = is_provisional(record.matches_played, settings.provisional_matches)
        return _json({**record.to_dict(), "provisional": provisional})

    @app.get(
        "/v1/players/{player_id}/history",
        tags=["players"],
        responses={404: {"description": "unknown player"}},
    )
    def get_history(
        player_id: PlayerId,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        cursor: Annotated[str | None, Query(max_length=200)] = None,
        order: Annotated[
            HistoryOrder,
            Query(description="asc: oldest first (default); desc: newest first. A cursor keeps its order."),
        ] = "asc",
    ) -> Response:
        """The player's rating after each match, oldest or newest first; follow ``next_cursor`` for more."""
        page = ledger().player_history(player_id, limit, cursor, order)
        return _json({"player_id": page.player_id, "items": page.items, "next_cursor": page.next_cursor})

    @app.get("/v1/recent-changes", tags=["players"])
    def get_recent_changes(
        players: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=128, pattern=ID_PATTERN)]],
            Query(max_length=MAX_RECENT, description=f"player ids, repeated (at most {MAX_RECENT})"),
        ],
        n: Annotated[int, Query(ge=1, le=MAX_RECENT, description="changes per player")] = 10,
        version: Annotated[
            int | None, Query(ge=1, le=2**31 - 1, description="ratings version (default: active)")
        ] = None,
    ) -> Response:
        """Each player's last ``n`` rating changes, newest first (an empty list for an unknown player)."""
        return _json({"items": ledger().recent_changes(players, n, version)})

    # ------------------------------------------------------------------ leaderboard
    @app.get("/v1/leaderboard", tags=["leaderboard"])
    async def get_leaderboard(
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        cursor: Annotated[str | None, Query(max_length=400)] = None,
        version: Annotated[
            int | None, Query(ge=1, le=2**31 - 1, description="ratings version (default: active)")
        ] = None,
    ) -> Response:
        """Highest rating first, ties by player id; keyset pages through ``next_cursor``."""
        page = await ledger().leaderboard_async(limit, cursor, version)
        return _json(
            {"items": page.items, "next_cursor": page.next_cursor, "ratings_version": page.version_id}
        )

    @app.get(
        "/v1/leaderboard/around/{player_id}",
        tags=["leaderboard"],
        responses={404: {"description": "unknown player"}},
    )
    def get_around(player_id: PlayerId, span: Annotated[int, Query(ge=0, le=100)] = 5) -> Response:
        """The player's rank with ``span`` players above and below."""
        page = ledger().around(player_id, span)
        return _json({"items": page.items, "next_cursor": None, "ratings_version": page.version_id})

    # ------------------------------------------------------------------ versions
    @app.get("/v1/versions", tags=["versions"])
    def get_versions() -> Response:
        """Every ratings version and which one is active."""
        return _json({"items": [v.to_dict() for v in ledger().versions()]})

    # ------------------------------------------------------------------ admin
    @app.post(
        "/v1/admin/matches/{match_id}/void", tags=["admin"], responses={404: {"description": "unknown match"}}
    )
    def void_match(match_id: MatchId, body: VoidIn, _key: AdminKey) -> Response:
        """Void a match: its effects and everything after it are recomputed from the ledger."""
        return _json(ledger().void(match_id, body.reason))

    @app.post("/v1/admin/rules", status_code=201, tags=["admin"])
    def load_rules(body: RulesIn, _key: AdminKey) -> Response:
        """Re-rate the whole ledger under new rules into a new version (activated unless told not to)."""
        rules = rules_from_toml(body.rules_toml)
        return _json(ledger().rerate(rules, body.label, activate=body.activate).to_dict(), 201)

    @app.post(
        "/v1/admin/versions/{version_id}/activate",
        tags=["admin"],
        responses={404: {"description": "unknown version"}},
    )
    def activate_version(version_id: Annotated[int, Path(ge=1, le=2**31 - 1)], _key: AdminKey) -> Response:
        """Switch the active ratings version atomically (the previous one stays readable)."""
        return _json(ledger().activate(version_id).to_dict())

    @app.post("/v1/admin/keys", status_code=201, tags=["admin"])
    def create_key(body: KeyIn, _key: AdminKey) -> Response:
        """Create an API key; the answer is the only time its secret is shown."""
        secret, info = keys_mod.create_key(state["db"], body.scope, body.label)
        return _json({**info.to_dict(), "key": secret}, 201)

    @app.get("/v1/admin/keys", tags=["admin"])
    def list_keys(_key: AdminKey) -> Response:
        """Every key (without secrets)."""
        return _json({"items": [k.to_dict() for k in keys_mod.list_keys(state["db"])]})

    @app.delete("/v1/admin/keys/{key_id}", tags=["admin"], responses={404: {"description": "unknown key"}})
    def revoke_key(key_id: Annotated[int, Path(ge=1, le=2**31 - 1)], _key: AdminKey) -> Response:
        """Revoke a key (this process forgets it at once; others within ``key_cache_seconds``)."""
        info = keys_mod.revoke_key(state["db"], key_id)
        app.state.key_cache.clear()
        return _json(info.to_dict())

    @app.get("/healthz", tags=["meta"])
    def health() -> Response:
        """Liveness: the database answers."""
        return _json({"status": "ok", "ledger_size": ledger().ledger_size()})

    install_observability(app, settings)
    return app


def app_from_env() -> FastAPI:
    """The app configured from ``SEDMA_ELO_*`` variables (what ``serve --workers N`` runs in each process)."""
    return create_app(ServiceSettings())
