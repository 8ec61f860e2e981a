"""The ledger's hand-written SQL: the write paths' statements and the hot reads.

The hot paths talk to the driver directly (the SQLAlchemy statement and result layers cost the
writer a fifth of its CPU, and building the recent-changes statement for 50 players cost more than
running it). ``?`` is SQLite's placeholder and the one :meth:`Database.query` rewrites; ``%s`` /
``%b`` are psycopg's. Everything else in the ledger uses SQLAlchemy Core on
:mod:`sedma_elo.storage.schema`.
"""

from __future__ import annotations

from ...storage.schema import MATCH_SLOTS
from .rows import FACT_COLUMNS, STAT_COLUMNS
from .types import HistoryOrder

__all__ = [
    "LEADERBOARD_AFTER",
    "LEADERBOARD_FIRST",
    "PG_FACT_TYPES",
    "PG_HELD_GAMES",
    "PG_INSERT_CHANGES",
    "PG_INSERT_MATCHES",
    "PG_INSERT_PLAYERS",
    "PG_LOCK_PLAYERS",
    "PG_SEQUENCES",
    "PG_STORED",
    "PG_UPDATE_PLAYERS",
    "PLAYERS_SQL",
    "PLAYER_SQL",
    "SEARCH_SQL",
    "SQLITE_HELD_GAMES",
    "SQLITE_INSERT_CHANGES",
    "SQLITE_INSERT_MATCHES",
    "SQLITE_INSERT_PLAYERS",
    "SQLITE_UPDATE_PLAYERS",
    "history_sql",
]

# PostgreSQL statements of the batch write path (see write_pg.py). Arrays travel in binary (%b):
# the text format escaped every quote of the stored JSON, half the CPU of a batch.
PG_STORED = "SELECT match_id, body_hash, sequence FROM matches WHERE match_id = ANY(%b)"
# The batch's ids that game records waiting for their analysis hold (refused 409 by the API).
_HELD_GAMES = "SELECT match_id FROM games WHERE status IN ('queued', 'analysing') AND match_id"
PG_HELD_GAMES = _HELD_GAMES + " = ANY(%b)"
PG_LOCK_PLAYERS = (
    "SELECT player_id, rating, matches_played FROM player_ratings"
    " WHERE version_id = (SELECT id FROM rating_versions WHERE active) AND player_id = ANY(%b)"
    " ORDER BY player_id FOR UPDATE"
)
PG_SEQUENCES = (
    "SELECT nextval('ledger_sequence') FROM generate_series(1,"
    " %s - (SELECT count(*) FROM matches WHERE match_id = ANY(%b)))"
)
# The ledger's facts (rows.FACT_COLUMNS) as arrays, the players' ids looked up in ``players``;
# the SQL type of each column's array (write_pg.py sends each as pg_arrays.array_of that type).
PG_FACT_TYPES = ("text", "bytea", "bigint", "smallint", *("text",) * 4, *("integer",) * len(STAT_COLUMNS))
_PG_FACT_VALUES = ", ".join(
    f"(SELECT id FROM players WHERE player_id = u.{c})" if c in MATCH_SLOTS else f"u.{c}"
    for c in FACT_COLUMNS
)
PG_INSERT_MATCHES = (
    f"INSERT INTO matches (sequence, {', '.join(FACT_COLUMNS)}, version_id, voided, void_reason,"
    f" created_at) SELECT u.sequence, {_PG_FACT_VALUES}, %s, false, NULL, %s FROM unnest(CAST(%b AS"
    " bigint[]), "
    + ", ".join(f"CAST(%b AS {t}[])" for t in PG_FACT_TYPES)
    + f") AS u(sequence, {', '.join(FACT_COLUMNS)})"
)
PG_INSERT_CHANGES = (
    "INSERT INTO rating_changes (version_id, player_key, sequence, rating_before, rating_after)"
    " SELECT %s, p.id, u.sequence, u.rating_before, u.rating_after FROM unnest(CAST(%b AS text[]),"
    " CAST(%b AS bigint[]), CAST(%b AS integer[]),"
    " CAST(%b AS integer[])) AS u(player_id, sequence, rating_before, rating_after)"
    " JOIN players p ON p.player_id = u.player_id"
)
PG_INSERT_PLAYERS = (
    "INSERT INTO player_ratings (version_id, player_id, rating, matches_played, last_sequence)"
    " SELECT %s, u.* FROM unnest(CAST(%b AS text[]), CAST(%b AS integer[]), CAST(%b AS integer[]),"
    " CAST(%b AS bigint[])) AS u"
)
PG_UPDATE_PLAYERS = (
    "UPDATE player_ratings AS p SET rating = u.rating, matches_played = u.played, last_sequence = u.last"
    " FROM unnest(CAST(%b AS text[]), CAST(%b AS integer[]), CAST(%b AS integer[]), CAST(%b AS bigint[]))"
    " AS u(player_id, rating, played, last) WHERE p.version_id = %s AND p.player_id = u.player_id"
)

# SQLite statements of the batch write path (see write_sqlite.py).
#: Format with ``marks``: one ``?`` per id.
SQLITE_HELD_GAMES = _HELD_GAMES + " IN ({marks})"
SQLITE_INSERT_MATCHES = (
    f"INSERT INTO matches (sequence, {', '.join(FACT_COLUMNS)}, version_id, voided, void_reason,"
    f" created_at) VALUES (?, {', '.join('?' * len(FACT_COLUMNS))}, ?, 0, NULL, ?)"
)
SQLITE_INSERT_CHANGES = (
    "INSERT INTO rating_changes (version_id, player_key, sequence, rating_before, rating_after)"
    " VALUES (?, ?, ?, ?, ?)"
)
SQLITE_UPDATE_PLAYERS = (
    "UPDATE player_ratings SET rating = ?, matches_played = ?, last_sequence = ?"
    " WHERE version_id = ? AND player_id = ?"
)
SQLITE_INSERT_PLAYERS = (
    "INSERT INTO player_ratings (version_id, player_id, rating, matches_played, last_sequence)"
    " VALUES (?, ?, ?, ?, ?)"
)

# Reads (``?`` placeholders, for Database.query and AsyncReader.query).
PLAYER_SQL = (
    "SELECT rating, matches_played, last_sequence FROM player_ratings WHERE version_id = ? AND player_id = ?"
)
#: PostgreSQL: many players of one version (an array of ids), for the batched hot read.
PLAYERS_SQL = (
    "SELECT player_id, rating, matches_played, last_sequence FROM player_ratings"
    " WHERE version_id = ? AND player_id = ANY(?)"
)
SEARCH_SQL = (
    "SELECT player_id, rating, matches_played FROM player_ratings"
    " WHERE version_id = ? AND player_id >= ? AND player_id < ? ORDER BY player_id LIMIT ?"
)
_LEADERBOARD = "SELECT player_id, rating, matches_played FROM player_ratings WHERE version_id = ?"
_LEADERBOARD_ORDER = " ORDER BY rating DESC, player_id LIMIT ?"
#: The first leaderboard page; parameters: version id, limit.
LEADERBOARD_FIRST = _LEADERBOARD + _LEADERBOARD_ORDER
#: A later page, after a (rating, player id) key; parameters: version id, rating, rating, id, limit.
#: ``rating <= ?`` is implied by the rest and is what makes it a range of the rank index: with the
#: ``OR`` alone both databases read the index from the top, so a page at rank 500,000 of 1 M players
#: read half of it (PostgreSQL 217 ms a page, 0.8 ms with the bound; docs/service-measurements.md,
#: "The reads at 10 M again").
LEADERBOARD_AFTER = _LEADERBOARD + " AND rating <= ? AND (rating < ? OR player_id > ?)" + _LEADERBOARD_ORDER

# The page's keys are picked first (a bounded range of the primary key, LIMIT inside), then only they
# are joined to their matches. With the LIMIT on the join, PostgreSQL (estimating a player's rows
# as the average, about 100) joined all 10,000 matches of a busy player and sorted them: 25 ms a
# page instead of 0.3 (docs/service-measurements.md, "A long career's page").
# The keys alone, of the player's key found first (a scalar subquery): PostgreSQL then reads an
# index-only range of the primary key in order and stops at the limit (0.2 ms). Joined to players,
# or with the ratings in the range, it estimated the player at the average (about 100 rows) and read
# the whole range by a bitmap scan and sorted it (7 ms at 10,000 matches).
_HISTORY_KEYS = (
    "SELECT rc.version_id, rc.player_key, rc.sequence FROM rating_changes rc"
    " WHERE rc.version_id = {ph} AND rc.player_key = (SELECT id FROM players WHERE player_id = {player})"
)
_HISTORY_MATCHES = (
    "SELECT pl.player_id, k.sequence, r.rating_before, r.rating_after, m.match_id, m.played_at"
    " FROM ({keys}) k JOIN rating_changes r ON r.version_id = k.version_id"
    " AND r.player_key = k.player_key AND r.sequence = k.sequence"
    " JOIN players pl ON pl.id = k.player_key"
    " JOIN matches m ON m.sequence = k.sequence ORDER BY k.sequence{desc}"
)


def history_sql(order: HistoryOrder, bounded: bool, ph: str, player: str | None = None) -> str:
    """One player's rating changes in ``order``, after (asc) or before (desc) a sequence if ``bounded``.

    The one query behind :meth:`Ledger.player_history` and :meth:`Ledger.recent_changes`: a range of
    the ``(version_id, player_id, sequence)`` index, read forwards or backwards. Parameters, with
    ``ph`` the driver's placeholder: version id, player id (unless ``player`` names a column to
    match instead), [bound,] limit.
    """
    keys = _HISTORY_KEYS.format(ph=ph, player=player or ph)
    if order == "asc":
        keys += (f" AND rc.sequence > {ph}" if bounded else "") + f" ORDER BY rc.sequence LIMIT {ph}"
        return _HISTORY_MATCHES.format(keys=keys, desc="")
    keys += (f" AND rc.sequence < {ph}" if bounded else "") + f" ORDER BY rc.sequence DESC LIMIT {ph}"
    return _HISTORY_MATCHES.format(keys=keys, desc=" DESC")
