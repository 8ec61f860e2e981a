"""Admin routes (admin key) for webhook subscriptions: register, list, delete."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from ...webhooks import create_subscription, delete_subscription, list_subscriptions
from ..bodies import CheckedJsonRoute
from ..deps import AdminKey, DatabaseDep, VersionId
from ..feed_schemas import WebhookIn, WebhookOut, WebhooksOut
from ..responses import BODY_ERRORS
from ..schemas import json_response
from .admin import admin_errors

__all__ = ["router"]

router = APIRouter(tags=["admin"], route_class=CheckedJsonRoute)


@router.post(
    "/v1/admin/webhooks",
    status_code=201,
    response_model=WebhookOut,
    responses=admin_errors(
        *BODY_ERRORS, notes={422: "a bad URL (not http or https), secret...; `detail[].loc`"}
    ),
)
def create_webhook(body: WebhookIn, _key: AdminKey, db: DatabaseDep) -> Response:
    """Register a URL to receive every change-feed item after ``after`` (default: from now on).

    Each item is POSTed as JSON, in sequence order, at least once, signed with ``secret``
    (``X-Sedma-Signature``, see docs/service.md). The secret is not shown again.
    """
    sub = create_subscription(db, body.url, body.secret, body.label, body.after)
    return json_response(sub.to_dict(), 201)


@router.get("/v1/admin/webhooks", response_model=WebhooksOut, responses=admin_errors())
def list_webhooks(_key: AdminKey, db: DatabaseDep) -> Response:
    """Every subscription with its delivery state (cursor, backlog, failures), without secrets."""
    return json_response({"items": [s.to_dict() for s in list_subscriptions(db)]})


@router.delete(
    "/v1/admin/webhooks/{webhook_id}",
    response_model=WebhookOut,
    responses=admin_errors(404, 422, notes={404: "unknown subscription"}),
)
def delete_webhook(webhook_id: VersionId, _key: AdminKey, db: DatabaseDep) -> Response:
    """Delete a subscription (nothing more is sent to it after the delivery under way)."""
    return json_response(delete_subscription(db, webhook_id).to_dict())
