"""Leases on database rows, shared by the game job table and the webhook subscriptions.

A process *claims* a row that is due by writing its holder and ``lease_until`` on it in one
transaction; the row is read ``FOR UPDATE SKIP LOCKED`` (PostgreSQL: processes on many machines
take different rows; SQLite holds its write lock instead). A holder that dies simply stops
renewing: once ``lease_until`` has passed the row is due again for everyone. What a row's
work is, and what *due* means besides the lease, is the caller's. :func:`retry_delay` is the one
back-off of the service (failed webhook deliveries, game workers restarted by ``serve``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Column, ColumnElement, Connection, Table, select, update

__all__ = ["claim_row", "retry_delay"]


def claim_row(
    conn: Connection,
    table: Table,
    columns: Sequence[Column[Any]],
    due: ColumnElement[bool],
    lease: Callable[[Any], Mapping[str, Any]],
    order_by: Sequence[Column[Any]] = (),
) -> Any | None:
    """Lease the first row of ``table`` that is ``due`` (in ``order_by``), inside ``conn``'s transaction.

    ``due`` must include the lease test (no holder, or ``lease_until`` passed): it is the caller's,
    as the columns are. ``lease(row)`` gives the values written on the claimed row (its holder,
    ``lease_until`` and whatever else the claim changes). Returns the row (a SQLAlchemy ``Row`` of
    ``columns``) as it was before the claim, or ``None`` when no row is due (or every due one is
    locked by another claim).
    """
    (key,) = table.primary_key.columns
    found = conn.execute(
        select(*columns, key.label("_key"))
        .where(due)
        .order_by(*order_by)
        .limit(1)
        .with_for_update(skip_locked=True)
    ).first()
    if found is None:
        return None
    conn.execute(update(table).where(key == found._key).values(**lease(found)))
    return found


def retry_delay(failures: int, base: float, cap: float) -> float:
    """Seconds to wait after ``failures`` (>= 1) failures in a row: ``base * 2**(failures-1)``, <= ``cap``."""
    return float(min(cap, base * 2.0 ** min(failures - 1, 60)))
