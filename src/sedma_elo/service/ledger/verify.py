"""Verify: replay the ledger with the one rating core and compare with every stored rating.

The replay streams the ledger in sequence order, one chunk of compact rows at a time, in one
read transaction (a snapshot: REPEATABLE READ on PostgreSQL, one deferred transaction on SQLite),
so memory holds a chunk and each version's state by player key, whatever the ledger's size. Each
chunk is rated by the batch kernel (the fold for team matches, :mod:`.bulk`) and compared with the
stored changes of the same sequence range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection

from ...core.engine import RatingResult
from ...core.fold import RatingState
from ...core.model import Match
from ...core.rules import Rules
from ...storage.schema import MATCH_SLOTS
from . import bulk
from .bulk import (
    Int64Array,
    KeyState,
    names_of,
    query_int64,
    rate_chunk,
    read_changes,
    read_chunks,
    use_kernel,
)
from .types import VerifyReport
from .versions import VersionsMixin

__all__ = ["VerifyMixin", "replay"]

#: Most differences a report lists.
_MAX_MISMATCHES = 100
_END = 2**62


def replay(
    entries: Iterable[tuple[int, Match]], rules: Rules, state: RatingState | None = None
) -> Iterator[tuple[int, RatingResult]]:
    """Apply matches in the given order with the one fold, updating ``state`` in place.

    Yields each ``(sequence, result)``. This is the definition every stored rating must agree with.
    """
    current = RatingState() if state is None else state
    for seq, match in entries:
        yield seq, current.apply(match, rules)


@dataclass
class _Check:
    """One version under check: its rules, how far it goes, its replayed state, its differences."""

    vid: int
    rules: Rules
    through: int
    state: KeyState
    changes: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)


def _orphans(raw: Any) -> list[int]:
    """Sequences of ledger rows whose version names no version, or voided rows (which the replay
    skips) with a player key that names no player: the checks the foreign keys once made."""
    missing = " OR ".join(
        f"(m.{slot} IS NOT NULL AND m.{slot} NOT IN (SELECT id FROM players))" for slot in MATCH_SLOTS
    )
    rows = raw.execute(
        "SELECT m.sequence FROM matches m WHERE m.version_id NOT IN (SELECT id FROM rating_versions)"
        f" OR (m.voided AND ({missing})) ORDER BY m.sequence LIMIT {_MAX_MISMATCHES}"
    ).fetchall()
    return [int(r[0]) for r in rows]


def _pair(row: Int64Array | None) -> tuple[int, int] | None:
    return None if row is None else (int(row[0]), int(row[1]))


class VerifyMixin(VersionsMixin):
    """Checking the stored ratings against a replay."""

    def verify(self, progress: Callable[[int, int], None] | None = None) -> VerifyReport:
        """Replay the non-voided ledger with the rating core for every version and compare.

        Compares each stored rating change (before and after) and each player's final rating and
        match count. The active version must hold the whole non-voided ledger; an inactive version is
        a snapshot and must hold exactly the non-voided matches up to the last one it applied. The
        report lists the differences (at most 100): each version's changes in sequence order, then
        its players by id. ``progress(done, total)`` is called after every chunk of matches.
        """
        report = VerifyReport()
        with self.db.read.connect() as c:
            conn = c.execution_options(isolation_level="REPEATABLE READ") if self._pg else c
            with conn.begin():
                self._verify_in(conn, report, progress)
        del report.mismatches[_MAX_MISMATCHES:]
        return report

    def _verify_in(
        self, conn: Connection, report: VerifyReport, progress: Callable[[int, int], None] | None
    ) -> None:
        raw: Any = conn.connection.driver_connection
        ph, pg = self._ph, self._pg
        size = int(raw.execute("SELECT coalesce(max(id), 0) + 1 FROM players").fetchone()[0])
        total = int(raw.execute("SELECT count(*) FROM matches WHERE NOT voided").fetchone()[0])
        checks = []
        for vid, active in raw.execute("SELECT id, active FROM rating_versions ORDER BY id").fetchall():
            rules = self._version_raw(raw, int(vid)).rules
            through = _END if active else self._through(conn, int(vid))
            checks.append(_Check(int(vid), rules, through, KeyState.fresh(size, rules)))
        report.versions = len(checks)
        placeholders = [""] * size
        kernel = use_kernel(total)
        done = 0
        # The ledger's keys have no foreign keys (0008_importfast): every one must name a player.
        players = np.zeros(size, dtype=bool)
        players[query_int64(raw, pg, "SELECT id FROM players", (4,))[:, 0]] = True
        orphans = _orphans(raw)
        for low, high, rows in read_chunks(raw, pg, 0, _END):
            report.matches += len(rows)
            keys = rows[:, 2:6]
            lost = (keys >= size) | ((keys >= 0) & ~players[np.clip(keys, 0, size - 1)])
            if lost.any():  # reported, and left out of the replay (its keys index the state)
                orphans += rows[lost.any(axis=1), 0][: _MAX_MISMATCHES - len(orphans)].tolist()
                rows = rows[~lost.any(axis=1)]
            for check in checks:
                if low >= check.through:
                    continue
                mine = rows[rows[:, 0] <= check.through]
                want = rate_chunk(raw, ph, mine, check.rules, check.state, placeholders, kernel)
                want = want[np.lexsort((want[:, 1], want[:, 0]))]
                have = read_changes(raw, pg, check.vid, low, min(high, check.through))
                if want.shape != have.shape or not np.array_equal(want, have):
                    self._list_changes(raw, check, want, have)
            done += len(rows)
            if progress is not None:
                progress(done, total)
        report.mismatches += [
            f"sequence {seq}: a player key or the version id names no row" for seq in sorted(orphans)
        ][:_MAX_MISMATCHES]
        for check in checks:
            report.players += self._check_players(raw, check)
            report.mismatches += check.changes + check.players

    def _list_changes(self, raw: Any, check: _Check, want: Int64Array, have: Int64Array) -> None:
        """Add the differences of one chunk's changes, in (sequence, player id) order."""
        if len(check.changes) >= _MAX_MISMATCHES:
            return
        expected = {(int(r[0]), int(r[1])): r[2:] for r in want}
        stored = {(int(r[0]), int(r[1])): r[2:] for r in have}
        differ = [
            k for k in expected.keys() | stored.keys() if _pair(expected.get(k)) != _pair(stored.get(k))
        ]
        names = names_of(raw, self._ph, [k[1] for k in differ])
        for seq, key in sorted(differ, key=lambda k: (k[0], names.get(k[1], "")))[:_MAX_MISMATCHES]:
            check.changes.append(
                f"version {check.vid}, sequence {seq}, player {names.get(key, key)}: stored "
                f"{_pair(stored.get((seq, key)))}, replay {_pair(expected.get((seq, key)))}"
            )

    def _check_players(self, raw: Any, check: _Check) -> int:
        """Compare the version's stored player rows with the replay, in keyset chunks by player id;
        return how many rows it has."""
        state, vid = check.state, check.vid
        seen = np.zeros(len(state.ratings), dtype=bool)
        bad: list[tuple[str, tuple[int, int] | None, tuple[int, int] | None]] = []
        count, after = 0, ""
        ph, chunk = self._ph, bulk.CHUNK
        while True:
            rows = raw.execute(
                "SELECT pr.player_id, p.id, pr.rating, pr.matches_played FROM player_ratings pr"
                f" LEFT JOIN players p ON p.player_id = pr.player_id WHERE pr.version_id = {ph}"
                f" AND pr.player_id > {ph} ORDER BY pr.player_id LIMIT {chunk}",
                (vid, after),
            ).fetchall()
            for pid, key, rating, played in rows:
                stored = (int(rating), int(played))
                played_here = key is not None and key < len(seen) and state.last[key] > 0
                want = (int(state.ratings[key]), int(state.games[key])) if played_here else None
                if played_here:
                    seen[key] = True
                if stored != want and len(bad) < _MAX_MISMATCHES:  # rows come in player id order
                    bad.append((pid, stored, want))
            count += len(rows)
            if len(rows) < chunk:
                break
            after = rows[-1][0]
        unstored = np.flatnonzero((state.last > 0) & ~seen)
        names = names_of(raw, ph, unstored[:_MAX_MISMATCHES].tolist())
        for key in unstored[:_MAX_MISMATCHES].tolist():
            bad.append((names[key], None, (int(state.ratings[key]), int(state.games[key]))))
        for pid, stored_row, want in sorted(bad, key=lambda b: b[0])[:_MAX_MISMATCHES]:
            check.players.append(
                f"version {vid}, player {pid}: stored (rating, matches) {stored_row}, replay {want}"
            )
        return count
