"""The database tables (SQLAlchemy Core), shared by SQLite and PostgreSQL.

The ledger (``matches``) holds the facts of every accepted match in application order, its players
by their integer key in ``players``; ratings are derived data kept per ratings version
(``player_ratings`` and ``rating_changes``) and can always be rebuilt by replaying the non-voided
ledger in ``sequence`` order with that version's rules. The row format's encoding and decoding
live in one module, ``service/ledger/rows.py``.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Sequence,
    SmallInteger,
    String,
    Table,
    Text,
)

__all__ = [
    "ID_TYPE",
    "LEDGER_SEQUENCE",
    "MATCH_SLOTS",
    "STAT_NAMES",
    "api_keys",
    "career_states",
    "change_events",
    "games",
    "kept_answers",
    "matches",
    "metadata",
    "player_ratings",
    "players",
    "rating_changes",
    "rating_counts",
    "rating_versions",
    "webhook_subscriptions",
]

#: A player or match id column: 128 characters, compared by code point on both databases
#: (``COLLATE "C"`` on PostgreSQL, as migration 0002 set it; SQLite compares so already), so the
#: player search's index ranges and the ledger's order agree with SQLite's.
ID_TYPE = String(128).with_variant(String(128, collation="C"), "postgresql")

metadata = MetaData()

#: PostgreSQL sequence that numbers the ledger (SQLite uses ``max(sequence) + 1`` under its write lock).
LEDGER_SEQUENCE = Sequence("ledger_sequence", metadata=metadata)

#: One row per ratings version: the rules it was computed with and whether it is the one served.
rating_versions = Table(
    "rating_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("label", String(200), nullable=False),
    Column("rules_label", String(210), nullable=False),
    Column("rules_toml", Text, nullable=False),
    Column("active", Boolean, nullable=False, default=False),
    Column("created_at", String(40), nullable=False),
    # How many times a void rewrote the version's history: a stored career state made before the
    # last rewrite is stale (``career_states``; migration 0011).
    Column("rewrites", Integer, nullable=False, default=0, server_default="0"),
)

#: Every player id ever rated, interned: the ledger's rows refer to a player by this integer key.
players = Table(
    "players",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("player_id", ID_TYPE, nullable=False, unique=True),
)

#: The slots of a match's players: ``a1``/``b1`` always, ``a2``/``b2`` in a two-against-two match.
MATCH_SLOTS = ("a1", "a2", "b1", "b2")
#: The counts of one player's statistics, one integer column per slot and count (``a1_bad_moves``...).
STAT_NAMES = ("bad_moves", "won_by_16", "won_by_24", "won_by_4_and_last")

#: The ledger: the facts of each accepted match in application order (``sequence``, assigned after
#: the players' locks are taken). The answer a repeat gets is derived from these facts and the rating
#: changes (``service/ledger/rows.py``); only an answer a void made underivable is kept as text
#: (``kept_answers``).
matches = Table(
    "matches",
    metadata,
    Column("sequence", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False),
    Column("match_id", ID_TYPE, nullable=False, unique=True),
    Column("body_hash", LargeBinary(32), nullable=False),  # SHA-256 of the canonical body text
    Column("played_at", BigInteger, nullable=True),  # microseconds since 1970-01-01 UTC
    Column("winner", SmallInteger, nullable=False),  # 0 side a, 1 side b, 2 draw
    # Player keys and the version without foreign keys (0008_importfast: no per-row trigger on a bulk
    # COPY); parents are never deleted, writers write keys of their own transaction, verify checks.
    *(Column(slot, Integer, nullable=slot.endswith("2")) for slot in MATCH_SLOTS),
    *(Column(f"{slot}_{name}", Integer, nullable=True) for slot in MATCH_SLOTS for name in STAT_NAMES),
    # The version the answer refers to: the one the match was applied in (the active one at a void).
    Column("version_id", Integer, nullable=False),
    Column("voided", Boolean, nullable=False, default=False),
    Column("void_reason", String(500), nullable=True),
    Column("created_at", BigInteger, nullable=False),  # microseconds since 1970-01-01 UTC
)

#: The answer text of a match whose answer a void's rebuild would otherwise change (rare).
kept_answers = Table(
    "kept_answers",
    metadata,
    Column(
        "sequence",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("matches.sequence"),
        primary_key=True,
        autoincrement=False,
    ),
    Column("response", Text, nullable=False),
)

#: Current rating of each player in each version.
player_ratings = Table(
    "player_ratings",
    metadata,
    Column("version_id", Integer, ForeignKey("rating_versions.id"), primary_key=True),
    Column("player_id", ID_TYPE, primary_key=True),
    Column("rating", Integer, nullable=False),
    Column("matches_played", Integer, nullable=False),
    Column("last_sequence", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
)
# The leaderboard's keyset order: rating high to low, ties by player id; read straight off this index.
Index(
    "ix_player_ratings_rank",
    player_ratings.c.version_id,
    player_ratings.c.rating.desc(),
    player_ratings.c.player_id,
    player_ratings.c.matches_played,  # covering: a page never touches the table
)

#: How many players of a version have each rating: a player's rank is the sum over the higher
#: ratings plus the ties before them by id, instead of a count of every player above (migration
#: 0011). Kept exact by every path that writes ``player_ratings`` (``service/ledger/counts.py``);
#: ``verify`` checks it. A rating nobody has any more may keep a row of 0.
rating_counts = Table(
    "rating_counts",
    metadata,
    Column("version_id", Integer, primary_key=True, autoincrement=False),
    Column("rating", Integer, primary_key=True, autoincrement=False),
    Column("players", Integer, nullable=False),
)

#: A player's career summary folded through sequence ``through`` of a version (record, streaks,
#: peak, best win, meetings; JSON with the meetings as base64 rows since migration 0014,
#: ``service/ledger/career_state.py``): the page extends it by the player's newer matches only.
#: Written by reads; valid while the version's ``rewrites`` equals the row's (a void bumps it).
#: Derived, disposable data: no foreign keys (migration 0011).
career_states = Table(
    "career_states",
    metadata,
    Column("version_id", Integer, primary_key=True, autoincrement=False),
    Column("player_key", Integer, primary_key=True, autoincrement=False),
    Column("through", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
    Column("rewrites", Integer, nullable=False),
    Column("state", Text, nullable=False),
)

#: One row per player per applied match per version: the history and the basis of explanations.
#: Clustered by (version, player, sequence), the history's order (WITHOUT ROWID on SQLite); the
#: sequence index serves one match's changes, a rebuild's range and a version's last sequence.
#: Derived rows (``verify`` recomputes every one), so no foreign keys: their per-row checks were a
#: third of a re-rate's server time (migration 0007). Versions and player keys are never deleted.
#: PostgreSQL: partitioned by version, one table per version (``partitions.py``, migration 0012).
rating_changes = Table(
    "rating_changes",
    metadata,
    Column("version_id", Integer, primary_key=True),
    Column("player_key", Integer, primary_key=True),
    Column("sequence", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("rating_before", Integer, nullable=False),
    Column("rating_after", Integer, nullable=False),
    # Covering for one match's ratings before (answers, explanations): SQLite's planner, without
    # statistics, scanned the whole version through the primary key when rating_before was not here.
    # player_key is included on PostgreSQL (migration 0009): a career reads every slot's rating
    # before each match in one index-only probe. (SQLite's index holds the primary key anyway.)
    # rating_after too (migration 0010): verify reads a version's changes by sequence range off
    # this index alone (SQLite: no primary-key lookup per row, 2.5x fewer CPU seconds).
    Index(
        "ix_rating_changes_sequence",
        "version_id",
        "sequence",
        "rating_before",
        "rating_after",
        postgresql_include=["player_key"],
    ),
    sqlite_with_rowid=False,
    postgresql_partition_by="LIST (version_id)",
)

#: API keys: only the SHA-256 of a key is stored.
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("prefix", String(16), nullable=False),
    Column("scope", String(10), nullable=False),
    Column("label", String(200), nullable=False, default=""),
    Column("created_at", String(40), nullable=False),
    Column("revoked_at", String(40), nullable=True),
)

#: Game records posted to ``POST /v1/games``; a row is also the record's analysis job.
#: ``status``: ``queued`` -> ``analysing`` (claimed by ``claim`` until ``lease_until``, epoch
#: seconds) -> ``applied`` or ``failed`` (``reason``). A claim whose lease ran out (its worker died)
#: is taken again. The match itself goes into ``matches`` through the ledger, by the same id.
games = Table(
    "games",
    metadata,
    Column("match_id", ID_TYPE, primary_key=True),
    Column("body", Text, nullable=False),  # canonical JSON of the request (the record normalised)
    Column("body_hash", String(64), nullable=False),  # SHA-256 of ``body``
    Column("played_at", String(40), nullable=True),
    Column("status", String(16), nullable=False),
    Column("reason", Text, nullable=True),
    Column("analysis", Text, nullable=True),  # JSON of the analysis, once analysed
    Column("attempts", Integer, nullable=False, default=0),
    Column("claim", String(64), nullable=True),  # the token of the worker holding the job
    Column("lease_until", Double, nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    Index("ix_games_jobs", "status", "created_at"),
)

#: The change feed and the webhooks' durable outbox: one row per applied match, void or switch of the
#: active version, written in the same transaction. ``sequence`` is dense and in commit order (taken
#: under a lock, see ``service/ledger/feed_events.py``); ``data`` is the item's JSON without it.
change_events = Table(
    "change_events",
    metadata,
    Column("sequence", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False),
    Column("kind", String(10), nullable=False),  # "match", "void" or "rerate"
    Column("version_id", Integer, nullable=False),  # the active version the item describes
    Column("data", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
)

#: Webhook subscriptions, each with its own delivery cursor into ``change_events``.
webhook_subscriptions = Table(
    "webhook_subscriptions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("url", String(2000), nullable=False),
    Column("secret", String(200), nullable=False),  # kept as given: it signs every delivery
    Column("label", String(200), nullable=False, default=""),
    Column("created_at", String(40), nullable=False),
    Column("delivered_through", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),  # failures in a row of the next event
    Column("next_attempt_at", Float, nullable=False, default=0.0),  # Unix time
    Column("last_error", String(500), nullable=True),
    Column("lease_owner", String(100), nullable=True),  # the process delivering it now
    Column("lease_until", Float, nullable=True),
)
