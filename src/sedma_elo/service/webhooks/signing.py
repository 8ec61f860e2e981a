"""Signing webhook deliveries: HMAC-SHA256 over ``<timestamp>.<body>`` with the subscription's secret.

Every delivery carries ``X-Sedma-Timestamp`` (Unix seconds) and ``X-Sedma-Signature: v1=<hex>``.
A receiver recomputes the HMAC over the timestamp, a dot and the raw body bytes, compares in
constant time, and refuses a timestamp too far from its clock (a replayed old delivery).
"""

from __future__ import annotations

import hashlib
import hmac
import time

__all__ = ["SIGNATURE_HEADER", "TIMESTAMP_HEADER", "sign", "signature_header", "verify"]

SIGNATURE_HEADER = "X-Sedma-Signature"
TIMESTAMP_HEADER = "X-Sedma-Timestamp"


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The hex HMAC-SHA256 of ``b"<timestamp>." + body`` under ``secret`` (UTF-8)."""
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    """The value of :data:`SIGNATURE_HEADER`: ``v1=<hex>``."""
    return "v1=" + sign(secret, timestamp, body)


def verify(
    secret: str,
    timestamp: str,
    body: bytes,
    signature: str,
    *,
    tolerance: float = 300.0,
    now: float | None = None,
) -> bool:
    """Whether ``signature`` (the header's value) signs ``body`` at ``timestamp`` under ``secret``.

    False as well for a timestamp that is not a number or more than ``tolerance`` seconds away
    from ``now`` (default: this machine's clock).
    """
    try:
        stamp = int(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - stamp) > tolerance:
        return False
    expected = signature_header(secret, stamp, body)
    return hmac.compare_digest(expected.encode(), signature.strip().encode())
