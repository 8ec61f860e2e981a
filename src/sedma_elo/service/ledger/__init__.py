"""The match ledger: apply matches exactly once and in order, void, re-rate, verify and read.

Everything here takes a :class:`~sedma_elo.storage.Database` (or a connection inside one of its
transactions) and returns plain domain objects; the HTTP routes and the CLI are thin layers on top.
:class:`Ledger` is assembled from one module per responsibility:

============== =================================================================================
``base``       the database, the version cache and the active version (:class:`LedgerBase`)
``types``      what the ledger answers (versions, outcomes, players, pages, reports)
``writes``     the writer's session and ``apply`` / ``import_matches``; per database in
               ``write_sqlite`` and ``write_pg``, the shared batch logic in ``batch``;
               ``import_history`` (a whole file at once, by the kernel) in ``bulk_import``
``reads``      players, histories, leaderboard, one match explained, the whole ledger
``versions``   void, re-rate, activate (rebuilding ratings from the ledger)
``verify``     replay and compare with every stored rating
``cursors``    keyset cursors, validated on the way in
``sql``        the hand-written SQL of the hot paths
``rows``       the row format: a match's facts as columns and back, players by integer key
``answers``    the answer of a repeat, derived from the stored facts (kept as text only after a void)
``views``      the JSON answer for one match
``feed``       the change feed's reads (``GET /v1/changes``); its writes in ``feed_events``
============== =================================================================================

Guarantees (see ``docs/service.md``):

* a batch of matches is applied in one transaction: ledger rows, rating changes and ratings commit
  together or not at all;
* a ``match_id`` is stored once (unique constraint); a repeat with the same canonical body gets the
  first answer byte for byte (derived from the stored facts), with a different body a
  :class:`~sedma_elo.errors.ConflictError`;
* ``sequence`` is taken after the players' rows are locked (``SELECT ... FOR UPDATE`` in player id
  order on PostgreSQL, the database write lock on SQLite), so two matches sharing a player get
  sequences in the order they were applied, and replaying the ledger by sequence reproduces every
  stored rating (:meth:`Ledger.verify`);
* void and re-rate take the whole ledger exclusively and rebuild ratings from the ledger.
"""

from __future__ import annotations

from .feed import ChangesPage, FeedMixin
from .types import (
    MAX_PAGE,
    MAX_RECENT,
    ApplyOutcome,
    HistoryOrder,
    HistoryPage,
    ImportReport,
    LeaderboardPage,
    PlayerRecord,
    VerifyReport,
    VersionInfo,
    now_text,
)
from .verify import VerifyMixin, replay
from .writes import WriterSession, WritesMixin

__all__ = [
    "MAX_PAGE",
    "MAX_RECENT",
    "ApplyOutcome",
    "ChangesPage",
    "HistoryOrder",
    "HistoryPage",
    "ImportReport",
    "LeaderboardPage",
    "Ledger",
    "PlayerRecord",
    "VerifyReport",
    "VersionInfo",
    "WriterSession",
    "now_text",
    "replay",
]


class Ledger(FeedMixin, VerifyMixin, WritesMixin):
    """The rating service's logic over one database (SQLite or PostgreSQL).

    Reads, writes, void/re-rate/activate, verify and the change feed come from the modules of this
    package; see the package docstring for which holds what.
    """
