"""Reading the change feed (``GET /v1/changes``): events after a sequence, in sequence order.

The feed is a log. Each item says what changed when it happened, in the active ratings version of
that moment, and is never rewritten: a ``match`` item gives every player's rating before and after
the match; a ``void`` item gives every player whose current rating the void changed (the voided
match's players and everyone rated after them); a ``rerate`` item says another version became the
active one (every rating may have changed: re-read the leaderboard or the players you follow).
Webhooks deliver exactly these items (see :mod:`sedma_elo.service.webhooks`).

Sequences are dense and in commit order (see :mod:`.feed_events`), so ``after=<last sequence
seen>`` never skips an item, however many writers there are.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ...errors import ValidationError
from .base import LedgerBase
from .feed_events import item_text
from .types import MAX_PAGE

__all__ = ["FEED_PAGE", "ChangesPage", "FeedMixin"]

#: Items per page when ``limit`` is not given.
FEED_PAGE = 100

_PAGE_SQL = "SELECT sequence, data FROM change_events WHERE sequence > ? ORDER BY sequence LIMIT ?"
_TOP_SQL = "SELECT coalesce(max(sequence), 0) FROM change_events"
# Sequences are dense, so an outbox backlog is the distance from a cursor to the top.
_BACKLOG_SQL = (
    "SELECT coalesce(sum(t.top - s.delivered_through), 0) FROM webhook_subscriptions s,"
    " (SELECT coalesce(max(sequence), 0) AS top FROM change_events) t WHERE s.delivered_through < t.top"
)


@dataclass(frozen=True, slots=True)
class ChangesPage:
    """A page of the feed: the items' JSON texts and where to go on from.

    ``next_after`` is the ``after`` of the next page when more items exist now (else None);
    ``poll_after`` is the ``after`` to poll with later: the last item's sequence, or the ``after``
    asked for when the page is empty.
    """

    items: list[str]
    next_after: int | None
    poll_after: int

    def to_text(self) -> str:
        """The page as the JSON text ``GET /v1/changes`` answers."""
        nxt = "null" if self.next_after is None else str(self.next_after)
        return f'{{"items":[{",".join(self.items)}],"next_after":{nxt},"poll_after":{self.poll_after}}}'


def _check_after(after: int) -> None:
    if isinstance(after, bool) or not 0 <= after < 2**63:
        raise ValidationError("after", "must be a sequence >= 0")


class FeedMixin(LedgerBase):
    """The change feed's reads."""

    def changes(self, after: int = 0, limit: int = FEED_PAGE) -> ChangesPage:
        """The feed's items with a sequence above ``after``, oldest first, at most ``limit`` (1..500).

        Raises:
            ValidationError: ``after`` below 0 or ``limit`` out of range.
        """
        _check_after(after)
        if isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
            raise ValidationError("limit", f"must be within [1, {MAX_PAGE}]")
        rows = self.db.query(_PAGE_SQL, (after, limit + 1))
        items = [item_text(seq, data) for seq, data in rows[:limit]]
        last = int(rows[min(len(rows), limit) - 1][0]) if rows else after
        return ChangesPage(items, last if len(rows) > limit else None, last)

    def stream_changes(self, after: int = 0, limit: int | None = None) -> Iterator[str]:
        """Every item above ``after`` through the end of the feed (or the first ``limit``), as JSON texts.

        Read a page of :data:`~.types.MAX_PAGE` at a time; ends at the first short page, so items
        committed while the stream runs are included until it reaches the end.

        Raises:
            ValidationError: ``after`` below 0 or ``limit`` below 1 (before anything is read).
        """
        _check_after(after)
        if limit is not None and (isinstance(limit, bool) or limit < 1):
            raise ValidationError("limit", "must be >= 1")
        return self._stream(after, limit)

    def _stream(self, after: int, limit: int | None) -> Iterator[str]:
        left = limit
        while left is None or left > 0:
            size = MAX_PAGE if left is None else min(MAX_PAGE, left)
            rows = self.db.query(_PAGE_SQL, (after, size))
            for seq, data in rows:
                yield item_text(seq, data)
            if len(rows) < size:
                return
            after = int(rows[-1][0])
            if left is not None:
                left -= len(rows)

    def feed_top(self) -> int:
        """The feed's last sequence (0 while it is empty)."""
        return int(self.db.query(_TOP_SQL)[0][0])

    def webhook_backlog(self) -> int:
        """Events still to be delivered, summed over every webhook subscription (the outbox backlog)."""
        with self.db.read.connect() as conn:  # SQLAlchemy: a database error is counted and typed
            return int(conn.exec_driver_sql(_BACKLOG_SQL).scalar_one())
