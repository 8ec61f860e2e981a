"""Compact ledger rows: store the facts of a match, derive its answer; players interned.

``matches`` loses the canonical JSON body and the stored answer text (3.1 KB of the 4.3 KB a match
cost): it keeps the facts as columns (winner code, four player slots as keys of the new ``players``
table, four integer counts per slot), the body hash as 32 bytes and both times as integer
microseconds since 1970-01-01 UTC. ``rating_changes`` refers to players by key and is clustered by
(version, player, sequence) (WITHOUT ROWID on SQLite), with a (version, sequence) index that
covers ``rating_before``.

The answer of a repeat is derived from these facts (``service/ledger/answers.py``). A match after the
first voided one may have an answer that a void's rebuild made underivable: the upgrade keeps the
stored text of every such match in ``kept_answers`` (none when nothing was ever voided). A voided
match's ``version_id`` becomes the version its voided answer names. The conversion is frozen here
(it imports nothing from the service layer): each body is checked against its stored hash.

Revision ID: 0005_compact
Revises: 0004_feed
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005_compact"
down_revision = "0004_feed"
branch_labels = None
depends_on = None

_SLOTS = ("a1", "a2", "b1", "b2")
_STATS = ("bad_moves", "won_by_16", "won_by_24", "won_by_4_and_last")
_STAT_COLUMNS = tuple(f"{slot}_{name}" for slot in _SLOTS for name in _STATS)
_WINNERS: tuple[Any, ...] = ("a", "b", "draw")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_CHUNK = 2000


def _seq() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _pg() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def _id_type() -> sa.types.TypeEngine[str]:
    return sa.String(128, collation="C") if _pg() else sa.String(128)


def _set_aside(table: str) -> str:
    """Rename ``table`` to ``<table>_old`` (and, on PostgreSQL, its index-backed constraints)."""
    old = f"{table}_old"
    op.rename_table(table, old)
    if _pg():
        bind = op.get_bind()
        names = bind.exec_driver_sql(
            "SELECT conname FROM pg_constraint WHERE conrelid = CAST(%s AS regclass)"
            " AND contype IN ('p', 'u')",
            (old,),
        ).scalars()
        for name in list(names):
            op.execute(f'ALTER TABLE {old} RENAME CONSTRAINT "{name}" TO "{name}_old"')
    return old


def _micros(text: str | None) -> int | None:
    if text is None:
        return None
    return (datetime.fromisoformat(text.replace("Z", "+00:00")) - _EPOCH) // _MICRO


def _time_text(value: int | None) -> str | None:
    if value is None:
        return None
    utc = _EPOCH + value * _MICRO
    return utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds").replace("+00:00", "Z")


def _canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _slots_of(body: dict[str, Any]) -> tuple[list[str | None], list[int | None]]:
    """A stored body's four player slots and sixteen counts."""
    if "player_a" in body:
        ids: list[str | None] = [body["player_a"], None, body["player_b"], None]
        stats = [body["stats"]["a"], None, body["stats"]["b"], None]
    else:
        ids = [body["team_a"][0], body["team_a"][1], body["team_b"][0], body["team_b"][1]]
        stats = [body["stats"][pid] for pid in ids]
    counts: list[int | None] = []
    for st in stats:
        counts.extend((None,) * 4 if st is None else (int(st[name]) for name in _STATS))
    return ids, counts


def _body_of(
    match_id: str, played_at: int | None, winner: int, ids: list[str | None], counts: list[Any]
) -> str:
    """The canonical body text of a compact row (the inverse of :func:`_slots_of`)."""
    stats = [dict(zip(_STATS, counts[4 * i : 4 * i + 4], strict=True)) for i in range(4)]
    body: dict[str, Any] = {
        "match_id": match_id,
        "played_at": _time_text(played_at),
        "winner": _WINNERS[winner],
    }
    if ids[1] is None:
        body.update(player_a=ids[0], player_b=ids[2], stats={"a": stats[0], "b": stats[2]})
    else:
        body.update(team_a=ids[:2], team_b=ids[2:], stats={pid: stats[i] for i, pid in enumerate(ids)})
    return _canonical(body)


def _create_compact() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("player_id", _id_type(), nullable=False, unique=True),
    )
    op.create_table(
        "matches",
        sa.Column("sequence", _seq(), primary_key=True, autoincrement=False),
        sa.Column("match_id", _id_type(), nullable=False, unique=True),
        sa.Column("body_hash", sa.LargeBinary(32), nullable=False),
        sa.Column("played_at", sa.BigInteger, nullable=True),
        sa.Column("winner", sa.SmallInteger, nullable=False),
        *(
            sa.Column(slot, sa.Integer, sa.ForeignKey("players.id"), nullable=slot.endswith("2"))
            for slot in _SLOTS
        ),
        *(sa.Column(c, sa.Integer, nullable=True) for c in _STAT_COLUMNS),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("rating_versions.id"), nullable=False),
        sa.Column("voided", sa.Boolean, nullable=False),
        sa.Column("void_reason", sa.String(500), nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "kept_answers",
        sa.Column(
            "sequence", _seq(), sa.ForeignKey("matches.sequence"), primary_key=True, autoincrement=False
        ),
        sa.Column("response", sa.Text, nullable=False),
    )
    op.create_table(
        "rating_changes",
        sa.Column("version_id", sa.Integer, sa.ForeignKey("rating_versions.id"), primary_key=True),
        sa.Column("player_key", sa.Integer, sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("sequence", _seq(), primary_key=True),
        sa.Column("rating_before", sa.Integer, nullable=False),
        sa.Column("rating_after", sa.Integer, nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_index(
        "ix_rating_changes_sequence", "rating_changes", ["version_id", "sequence", "rating_before"]
    )


def upgrade() -> None:
    """Convert ``matches`` and ``rating_changes`` to the compact rows (checking every body's hash)."""
    bind = op.get_bind()
    ph = "%s" if _pg() else "?"
    old_matches, old_changes = _set_aside("matches"), _set_aside("rating_changes")
    _create_compact()
    keys: dict[str, int] = {}
    for pid in bind.exec_driver_sql(
        f"SELECT DISTINCT player_id FROM {old_changes} ORDER BY player_id"
    ).scalars():
        keys[pid] = len(keys) + 1
    first_void = bind.exec_driver_sql(f"SELECT min(sequence) FROM {old_matches} WHERE voided").scalar()
    columns = ("sequence", "match_id", "body_hash", "played_at", "winner", *_SLOTS, *_STAT_COLUMNS)
    insert = (
        f"INSERT INTO matches ({', '.join(columns)}, version_id, voided, void_reason, created_at)"
        f" VALUES ({', '.join([ph] * (len(columns) + 4))})"
    )
    stored = 0  # players with a key up to here are in the table
    last = -1
    while True:
        rows = bind.exec_driver_sql(
            f"SELECT sequence, match_id, body, body_hash, played_at, version_id, voided, void_reason,"
            f" created_at, response FROM {old_matches} WHERE sequence > {ph}"
            f" ORDER BY sequence LIMIT {_CHUNK}",
            (last,),
        ).all()
        if not rows:
            break
        out, kept = [], []
        for seq, mid, body, digest, played, vid, voided, reason, created, response in rows:
            if hashlib.sha256(body.encode()).hexdigest() != digest:
                raise RuntimeError(f"match {mid!r}: the stored body does not match its hash")
            data = json.loads(body)
            ids, counts = _slots_of(data)
            if _body_of(mid, _micros(played), _WINNERS.index(data["winner"]), ids, counts) != body:
                raise RuntimeError(f"match {mid!r}: the stored body is not in canonical form")
            for pid in ids:
                if pid is not None and pid not in keys:
                    keys[pid] = len(keys) + 1
            if voided:
                vid = json.loads(response)["ratings_version"]["id"]
            elif first_void is not None and seq > first_void:
                kept.append((seq, response))
            slots = [None if pid is None else keys[pid] for pid in ids]
            fact = (seq, mid, bytes.fromhex(digest), _micros(played), _WINNERS.index(data["winner"]))
            out.append((*fact, *slots, *counts, vid, bool(voided), reason, _micros(created)))
        stored = _store_players(keys, stored, ph)
        bind.exec_driver_sql(insert, out)
        if kept:
            bind.exec_driver_sql(f"INSERT INTO kept_answers (sequence, response) VALUES ({ph}, {ph})", kept)
        last = rows[-1][0]
    # Players seen only in rating changes (none in a consistent ledger) get their row too.
    _store_players(keys, stored, ph)
    op.execute(
        "INSERT INTO rating_changes (version_id, player_key, sequence, rating_before, rating_after)"
        f" SELECT rc.version_id, p.id, rc.sequence, rc.rating_before, rc.rating_after FROM {old_changes} rc"
        " JOIN players p ON p.player_id = rc.player_id"
    )
    if _pg():  # the keys were given explicitly: move the key sequence past them
        op.execute(
            "SELECT setval(pg_get_serial_sequence('players', 'id'), coalesce(max(id), 0) + 1, false)"
            " FROM players"
        )
    op.drop_table(old_changes)
    op.drop_table(old_matches)


def _store_players(keys: dict[str, int], stored: int, ph: str) -> int:
    """Insert the players of ``keys`` with a key above ``stored``; return the highest key."""
    new = [(k, p) for p, k in keys.items() if k > stored]
    if new:
        op.get_bind().exec_driver_sql(f"INSERT INTO players (id, player_id) VALUES ({ph}, {ph})", new)
    return len(keys)


def downgrade() -> None:
    """Back to JSON bodies and stored answer texts (derived again with the engine)."""
    from sedma_elo.core.explain import change_to_dict
    from sedma_elo.core.fold import RatingState
    from sedma_elo.core.model import Match, PlayerStats
    from sedma_elo.core.rules import rules_from_toml

    bind = op.get_bind()
    ph = "%s" if _pg() else "?"
    new_matches, new_changes = _set_aside("matches"), _set_aside("rating_changes")
    op.create_table(
        "matches",
        sa.Column("sequence", _seq(), primary_key=True, autoincrement=False),
        sa.Column("match_id", _id_type(), nullable=False, unique=True),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column("response", sa.Text, nullable=False),
        sa.Column("played_at", sa.String(40), nullable=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("rating_versions.id"), nullable=False),
        sa.Column("voided", sa.Boolean, nullable=False),
        sa.Column("void_reason", sa.String(500), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "rating_changes",
        sa.Column("version_id", sa.Integer, sa.ForeignKey("rating_versions.id"), primary_key=True),
        sa.Column("sequence", _seq(), primary_key=True),
        sa.Column("player_id", _id_type(), primary_key=True),
        sa.Column("rating_before", sa.Integer, nullable=False),
        sa.Column("rating_after", sa.Integer, nullable=False),
    )
    op.create_index("ix_rating_changes_player", "rating_changes", ["version_id", "player_id", "sequence"])
    op.execute(
        "INSERT INTO rating_changes (version_id, sequence, player_id, rating_before, rating_after)"
        " SELECT rc.version_id, rc.sequence, p.player_id, rc.rating_before, rc.rating_after"
        f" FROM {new_changes} rc"
        " JOIN players p ON p.id = rc.player_key"
    )
    versions = {
        int(vid): (label, rules_from_toml(text))
        for vid, label, text in bind.exec_driver_sql("SELECT id, label, rules_toml FROM rating_versions")
    }
    select = (
        "SELECT m.sequence, m.match_id, m.played_at, m.winner,"
        f" {', '.join(f'p{s}.player_id' for s in _SLOTS)},"
        f" {', '.join(f'm.{c}' for c in _STAT_COLUMNS)}, m.body_hash, m.version_id, m.voided, m.void_reason,"
        f" m.created_at, k.response FROM {new_matches} m"
        + "".join(f" LEFT JOIN players p{s} ON p{s}.id = m.{s}" for s in _SLOTS)
        + f" LEFT JOIN kept_answers k ON k.sequence = m.sequence WHERE m.sequence > {ph} ORDER BY m.sequence"
        f" LIMIT {_CHUNK}"
    )
    insert = (
        "INSERT INTO matches (sequence, match_id, body, body_hash, response, played_at, version_id, voided,"
        f" void_reason, created_at) VALUES ({', '.join([ph] * 10)})"
    )
    before_sql = (
        "SELECT player_id, rating_before, (SELECT count(*) FROM rating_changes r2 WHERE r2.version_id ="
        " rc.version_id AND r2.player_id = rc.player_id AND r2.sequence < rc.sequence) FROM rating_changes rc"
        f" WHERE rc.version_id = {ph} AND rc.sequence = {ph}"
    )
    last = -1
    while True:
        rows = bind.exec_driver_sql(select, (last,)).all()
        if not rows:
            break
        out = []
        for row in rows:
            seq, mid, played, winner = row[0], row[1], row[2], row[3]
            ids, counts = list(row[4:8]), list(row[8:24])
            digest, vid, voided, reason, created, kept = row[24:30]
            body = _body_of(mid, played, winner, ids, counts)
            response = kept
            if response is None or voided:
                label, rules = versions[int(vid)]
                result = None
                if not voided:
                    stats = {
                        p: PlayerStats(*counts[4 * i : 4 * i + 4]) for i, p in enumerate(ids) if p is not None
                    }
                    team_a = tuple(p for p in ids[:2] if p is not None)
                    team_b = tuple(p for p in ids[2:] if p is not None)
                    match = Match(team_a, team_b, _WINNERS[winner], stats, mid)
                    found = bind.exec_driver_sql(before_sql, (vid, seq)).all()
                    state = RatingState({r[0]: r[1] for r in found}, {r[0]: int(r[2]) for r in found})
                    result = state.rate(match, rules)
                view = {
                    "match_id": mid,
                    "sequence": seq,
                    "played_at": _time_text(played),
                    "voided": bool(voided),
                    "void_reason": reason,
                    "match": json.loads(body),
                    "ratings_version": {"id": int(vid), "label": label, "rules": rules.label},
                    "changes": []
                    if result is None
                    else [change_to_dict(result, c.player_id) for c in result.changes],
                }
                response = json.dumps(view, separators=(",", ":"), ensure_ascii=False)
            created_text = _time_text(created)
            out.append(
                (
                    seq,
                    mid,
                    body,
                    bytes(digest).hex(),
                    response,
                    _time_text(played),
                    vid,
                    bool(voided),
                    reason,
                    created_text,
                )
            )
        bind.exec_driver_sql(insert, out)
        last = rows[-1][0]
    op.drop_table(new_changes)
    op.drop_table("kept_answers")
    op.drop_table(new_matches)
    op.drop_table("players")
