"""Delivering the change feed to webhook subscriptions: at least once, in sequence order, signed.

One :class:`Deliverer` thread runs in each service process. It takes a subscription that has
events after its cursor and is due (not waiting out a back-off) by writing a *lease* on its row
(``lease_owner``, ``lease_until``; on PostgreSQL the row is read ``FOR UPDATE SKIP LOCKED``), so
that with ``serve --workers N`` only one process delivers to a subscription at a time and a
process that dies leaves it to the others once the lease runs out. It then POSTs the events after
the cursor one at a time, in sequence order, and moves the cursor on (renewing the lease) after
each page and at least every quarter lease. Nothing is held open on the database during an HTTP
request.

A delivery succeeds on any 2xx answer. Anything else (another status, a refused connection, a
timeout) stops the subscription at that event: it is tried again after ``retry_base * 2**(n-1)``
seconds (``n`` failures in a row, at most ``retry_max``), and never skipped. Since the cursor is
saved per page, a crash can deliver a few events twice: receivers drop an ``X-Sedma-Sequence``
they have already seen. Redirects are not followed.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass

import httpx2
from sqlalchemy import and_, or_, update

from ...storage import Database
from ...storage.schema import webhook_subscriptions
from ..leases import claim_row, retry_delay
from ..ledger.feed_events import item_text
from ..observability.metrics import WEBHOOK_DELIVERIES
from .signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, signature_header

__all__ = ["EVENT_HEADER", "SEQUENCE_HEADER", "SUBSCRIPTION_HEADER", "Deliverer", "retry_delay"]

SEQUENCE_HEADER = "X-Sedma-Sequence"
EVENT_HEADER = "X-Sedma-Event"
SUBSCRIPTION_HEADER = "X-Sedma-Subscription"

_log = logging.getLogger("sedma_elo.service.webhooks")
_PAGE_SQL = "SELECT sequence, kind, data FROM change_events WHERE sequence > ? ORDER BY sequence LIMIT ?"
_DUE_SQL = (
    "SELECT id FROM webhook_subscriptions WHERE next_attempt_at <= ?"
    " AND (lease_until IS NULL OR lease_until < ?)"
    " AND delivered_through < (SELECT coalesce(max(sequence), 0) FROM change_events)"
    " ORDER BY next_attempt_at, id"
)


@dataclass(frozen=True, slots=True)
class _Claim:
    id: int
    url: str
    secret: str
    through: int
    attempts: int


class Deliverer:
    """The webhook delivery thread of one process (see the module docstring).

    ``poll``: seconds between looks for work when idle; ``timeout``: seconds per HTTP request;
    ``retry_base``/``retry_max``: the back-off; ``lease``: seconds a claimed subscription stays
    this process's without news; ``page``: events read per query.
    """

    def __init__(
        self,
        db: Database,
        *,
        poll: float = 0.5,
        timeout: float = 10.0,
        retry_base: float = 1.0,
        retry_max: float = 600.0,
        lease: float = 60.0,
        page: int = 100,
    ) -> None:
        self.db = db
        self.poll = poll
        self.retry_base = retry_base
        self.retry_max = retry_max
        # A request must end well inside the lease, or another process could take over meanwhile.
        self.lease = max(lease, 4 * timeout)
        self.page = page
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"[:100]
        self._client = httpx2.Client(timeout=timeout, follow_redirects=False)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sedma-elo-webhooks", daemon=True)

    def start(self) -> None:
        """Start the delivery thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after the request under way (its cursor is saved) and close the HTTP client."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        self._client.close()

    def wake(self) -> None:
        """Look for work now instead of at the end of the poll interval."""
        self._wake.set()

    def _run(self) -> None:
        failing = False
        while not self._stop.is_set():
            try:
                busy = self.run_once() > 0
                failing = False
            except Exception as exc:  # the database may be down: say so once, wait, try again
                if not failing:
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    _log.warning("webhook delivery paused: %s (trying again every %.1f s)", reason, self.poll)
                failing, busy = True, False
            if not busy:
                self._wake.wait(self.poll)
                self._wake.clear()

    def run_once(self) -> int:
        """Deliver what is due now to every subscription this process can claim; return how many."""
        now = time.time()
        sent = 0
        for (sid,) in self.db.query(_DUE_SQL, (now, now)):
            if self._stop.is_set():
                break
            claim = self._claim(int(sid))
            if claim is not None:
                sent += self._deliver(claim)
        return sent

    def _claim(self, sid: int) -> _Claim | None:
        s = webhook_subscriptions.c
        now = time.time()
        with self.db.begin_write() as conn:
            row = claim_row(
                conn,
                webhook_subscriptions,
                [s.id, s.url, s.secret, s.delivered_through, s.attempts],
                and_(
                    s.id == sid, s.next_attempt_at <= now, or_(s.lease_until.is_(None), s.lease_until < now)
                ),
                lambda _row: {"lease_owner": self.owner, "lease_until": now + self.lease},
            )
        if row is None:
            return None
        return _Claim(row.id, row.url, row.secret, row.delivered_through, row.attempts)

    def _deliver(self, claim: _Claim) -> int:
        through, sent = claim.through, 0
        saved = time.monotonic()
        while not self._stop.is_set():
            rows = self.db.query(_PAGE_SQL, (through, self.page))
            if not rows:
                break
            for seq, kind, data in rows:
                error = self._post(claim, int(seq), kind, item_text(seq, data).encode())
                if error is not None:
                    failures = claim.attempts + 1 if sent == 0 else 1
                    retry_at = time.time() + retry_delay(failures, self.retry_base, self.retry_max)
                    self._save(claim.id, through, failures, retry_at, error, keep=False)
                    _log.info(
                        "webhook %d: sequence %d failed (%s); retry in %.1f s",
                        claim.id,
                        seq,
                        error,
                        retry_at - time.time(),
                    )
                    return sent
                through, sent = int(seq), sent + 1
                if self._stop.is_set():
                    break
                # Renewed a quarter lease after the last save: one more request (<= timeout <= a
                # quarter lease) still ends inside the lease.
                if time.monotonic() - saved > self.lease / 4:
                    if not self._save(claim.id, through, 0, 0.0, None, keep=True):
                        return sent
                    saved = time.monotonic()
            if not self._save(claim.id, through, 0, 0.0, None, keep=True):
                return sent  # deleted, or the lease was lost: another process goes on from the cursor
            saved = time.monotonic()
        self._save(claim.id, through, 0 if sent else claim.attempts, 0.0, None, keep=False)
        return sent

    def _post(self, claim: _Claim, seq: int, kind: str, body: bytes) -> str | None:
        """POST one event; None on a 2xx answer, else what went wrong."""
        stamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "sedma-elo-webhooks/1",
            EVENT_HEADER: kind,
            SEQUENCE_HEADER: str(seq),
            SUBSCRIPTION_HEADER: str(claim.id),
            TIMESTAMP_HEADER: str(stamp),
            SIGNATURE_HEADER: signature_header(claim.secret, stamp, body),
        }
        try:
            response = self._client.post(claim.url, content=body, headers=headers)
        except httpx2.HTTPError as exc:
            WEBHOOK_DELIVERIES.labels("failed").inc()
            return f"{type(exc).__name__}: {exc}"[:500]
        if 200 <= response.status_code < 300:
            WEBHOOK_DELIVERIES.labels("delivered").inc()
            return None
        WEBHOOK_DELIVERIES.labels("failed").inc()
        return f"HTTP {response.status_code}"

    def _save(
        self, sid: int, through: int, attempts: int, retry_at: float, error: str | None, *, keep: bool
    ) -> bool:
        """Store the cursor and retry state if this process still holds the lease; renew or release it."""
        s = webhook_subscriptions.c
        lease = (
            {"lease_until": time.time() + self.lease} if keep else {"lease_owner": None, "lease_until": None}
        )
        with self.db.begin_write() as conn:
            result = conn.execute(
                update(webhook_subscriptions)
                .where(s.id == sid, s.lease_owner == self.owner)
                .values(
                    delivered_through=through,
                    attempts=attempts,
                    next_attempt_at=retry_at,
                    last_error=error,
                    **lease,
                )
            )
        return bool(result.rowcount == 1)
