"""Admin routes (admin key): void a match, load rules, activate a version, manage API keys."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from ....core.rules import rules_from_toml
from ...auth import keys
from ..bodies import CheckedJsonRoute
from ..deps import AdminKey, DatabaseDep, GuardDep, KeyId, MatchId, Services, ServicesDep, VersionId
from ..responses import AUTH_ERRORS, BODY_ERRORS, Key, KeyList, MatchView, NewKey, Version, errors
from ..schemas import KeyIn, RulesIn, VoidIn, json_response

__all__ = ["admin_errors", "router"]

router = APIRouter(tags=["admin"], route_class=CheckedJsonRoute)


def admin_errors(*codes: int, notes: dict[int, str] | None = None) -> dict[int | str, dict[str, Any]]:
    """The error answers of an admin route (of any admin area): those of every keyed route, and ``codes``."""
    return errors(*AUTH_ERRORS, *codes, notes={403: "a key without the admin scope", **(notes or {})})


def _then_store_careers(response: Response, services: Services) -> Response:
    """``response``, the busiest players' page summaries of the active version then stored again
    (:meth:`Ledger.store_careers` on the :class:`CareerStorer`'s thread, after the answer)."""
    services.careers.request()
    return response


@router.post(
    "/v1/admin/matches/{match_id}/void",
    response_model=MatchView,
    responses=admin_errors(*BODY_ERRORS, 404, notes={404: "unknown match"}),
)
def void_match(match_id: MatchId, body: VoidIn, _key: AdminKey, services: ServicesDep) -> Response:
    """Void a match: its effects and everything after it are recomputed from the ledger."""
    return _then_store_careers(json_response(services.ledger.void(match_id, body.reason)), services)


@router.post(
    "/v1/admin/rules",
    status_code=201,
    response_model=Version,
    responses=admin_errors(
        *BODY_ERRORS, notes={422: "invalid body or rules; `detail[].loc` names the field"}
    ),
)
def load_rules(body: RulesIn, _key: AdminKey, services: ServicesDep) -> Response:
    """Re-rate the whole ledger under new rules into a new version (activated unless told not to)."""
    rules = rules_from_toml(body.rules_toml)
    info = services.ledger.rerate(rules, body.label, activate=body.activate)
    response = json_response(info.to_dict(), 201)
    return _then_store_careers(response, services) if info.active else response


@router.post(
    "/v1/admin/versions/{version_id}/activate",
    response_model=Version,
    responses=admin_errors(404, 422, notes={404: "unknown version"}),
)
def activate_version(version_id: VersionId, _key: AdminKey, services: ServicesDep) -> Response:
    """Switch the active ratings version atomically (the previous one stays readable)."""
    return _then_store_careers(json_response(services.ledger.activate(version_id).to_dict()), services)


@router.post("/v1/admin/keys", status_code=201, response_model=NewKey, responses=admin_errors(*BODY_ERRORS))
def create_key(body: KeyIn, _key: AdminKey, db: DatabaseDep) -> Response:
    """Create an API key; the answer is the only time its secret is shown."""
    secret, info = keys.create_key(db, body.scope, body.label)
    return json_response({**info.to_dict(), "key": secret}, 201)


@router.get("/v1/admin/keys", response_model=KeyList, responses=admin_errors())
def list_keys(_key: AdminKey, db: DatabaseDep) -> Response:
    """Every key (without secrets)."""
    return json_response({"items": [k.to_dict() for k in keys.list_keys(db)]})


@router.delete(
    "/v1/admin/keys/{key_id}",
    response_model=Key,
    responses=admin_errors(404, 422, notes={404: "unknown key"}),
)
def revoke_key(key_id: KeyId, _key: AdminKey, db: DatabaseDep, guard: GuardDep) -> Response:
    """Revoke a key (this process forgets it at once; others within ``key_cache_seconds``)."""
    info = keys.revoke_key(db, key_id)
    guard.forget_keys()
    return json_response(info.to_dict())
