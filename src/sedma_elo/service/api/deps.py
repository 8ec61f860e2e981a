"""Typed FastAPI dependencies of the API routes: the running services, the key checks, the path ids.

A route names what it needs in its signature (``ledger: LedgerDep``, ``_key: AdminKey``); the
values come from the :class:`Services` the app's lifespan started (one per app, on
``app.state.services``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AfterValidator

from ...core.ids import ID_PATTERN, MAX_ID_LENGTH
from ...storage import Database, WalCheckpointer
from ..auth import KeyGuard, KeyInfo
from ..career_store import CareerStorer
from ..ledger import Ledger
from ..payload import valid_id
from ..settings import ServiceSettings
from ..writer import Submitter

__all__ = [
    "AdminKey",
    "DatabaseDep",
    "GamesKey",
    "GuardDep",
    "KeyId",
    "LedgerDep",
    "MatchId",
    "PlayerId",
    "Services",
    "ServicesDep",
    "VersionId",
    "VersionQuery",
    "WriteKey",
    "WriterDep",
    "services_of",
]


@dataclass(frozen=True, slots=True)
class Services:
    """What the routes of one app work with, started and stopped by the app's lifespan."""

    settings: ServiceSettings
    db: Database
    ledger: Ledger
    writer: Submitter
    guard: KeyGuard
    careers: CareerStorer  # the busiest players' page summaries, stored after an admin change
    checkpointer: WalCheckpointer | None = None  # SQLite's WAL checkpoints, beside the writer


def services_of(request: Request) -> Services:
    """The services of the app serving ``request``."""
    services: Services = request.app.state.services
    return services


# The dependencies only read app.state, so they are coroutines: FastAPI runs a plain function
# dependency on a worker thread, and those hand-offs were most of a player read's CPU.
async def _services(request: Request) -> Services:
    return services_of(request)


async def _ledger(request: Request) -> Ledger:
    return services_of(request).ledger


async def _db(request: Request) -> Database:
    return services_of(request).db


async def _writer(request: Request) -> Submitter:
    return services_of(request).writer


async def _guard(request: Request) -> KeyGuard:
    return services_of(request).guard


ServicesDep = Annotated[Services, Depends(_services)]
LedgerDep = Annotated[Ledger, Depends(_ledger)]
DatabaseDep = Annotated[Database, Depends(_db)]
WriterDep = Annotated[Submitter, Depends(_writer)]
GuardDep = Annotated[KeyGuard, Depends(_guard)]

_bearer = HTTPBearer(auto_error=False, description="an API key: `Authorization: Bearer sk_...`")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _secret(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return credentials.credentials if credentials is not None else None


def _address(request: Request) -> str | None:
    return request.client.host if request.client is not None else None


async def _write_key(guard: GuardDep, credentials: Credentials, request: Request) -> KeyInfo:
    return await guard.authorize_async(_secret(credentials), "write", _address(request))


async def _games_key(guard: GuardDep, credentials: Credentials, request: Request) -> KeyInfo:
    return await guard.authorize_async(_secret(credentials), "games", _address(request))


def _admin_key(guard: GuardDep, credentials: Credentials, request: Request) -> KeyInfo:
    # A sync dependency: FastAPI runs it on a worker thread, so its lookup does not block the loop.
    return guard.authorize(_secret(credentials), "admin", _address(request))


#: A key with the write scope (or admin); 401 without one, 403 for another scope, 429 over its rate
#: (or after too many unknown keys from the client's address).
WriteKey = Annotated[KeyInfo, Depends(_write_key)]
#: A key that may post game records: scope games, write or admin.
GamesKey = Annotated[KeyInfo, Depends(_games_key)]
#: A key with the admin scope.
AdminKey = Annotated[KeyInfo, Depends(_admin_key)]

#: An id in a URL path, normalised to NFC and checked by the one id rule (sedma_elo.core.ids), so
#: ``/v1/players/José`` finds the player whether the client sent the NFC or the NFD form; a
#: refused character is a 422 naming ``path.<name>``. The pattern only documents the rule.
_PathId = Annotated[
    str,
    Path(min_length=1, max_length=MAX_ID_LENGTH, json_schema_extra={"pattern": ID_PATTERN}),
    AfterValidator(valid_id),
]
PlayerId = _PathId
MatchId = _PathId
#: A ratings version's id (``ratings_versions.id``), as in ``/v1/versions/{version_id}``.
VersionId = Annotated[int, Path(ge=1, le=2**31 - 1)]
#: An API key's id (``api_keys.id``, shown by ``keys list``), as in ``/v1/admin/keys/{key_id}``.
KeyId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the key's id (see `sedma-elo keys list`)")]
#: ``?version=``: a ratings version to read instead of the active one.
VersionQuery = Annotated[
    int | None, Query(ge=1, le=2**31 - 1, description="ratings version (default: active)")
]
