"""Webhooks: subscriptions (URL and secret) and the delivery of the change feed to them.

``subscriptions`` registers, lists and deletes; ``delivery`` runs the :class:`Deliverer` thread
that POSTs every change-feed item after a subscription's cursor, in order, at least once;
``signing`` signs deliveries and verifies them (for receivers written in Python).
"""

from __future__ import annotations

from .delivery import EVENT_HEADER, SEQUENCE_HEADER, SUBSCRIPTION_HEADER, Deliverer, retry_delay
from .signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, signature_header, verify
from .subscriptions import (
    Subscription,
    check_url,
    create_subscription,
    delete_subscription,
    list_subscriptions,
)

__all__ = [
    "EVENT_HEADER",
    "SEQUENCE_HEADER",
    "SIGNATURE_HEADER",
    "SUBSCRIPTION_HEADER",
    "TIMESTAMP_HEADER",
    "Deliverer",
    "Subscription",
    "check_url",
    "create_subscription",
    "delete_subscription",
    "list_subscriptions",
    "retry_delay",
    "sign",
    "signature_header",
    "verify",
]
