"""Verify: replay the ledger with the one rating core and compare with every stored rating.

The replay streams the ledger in sequence order, one chunk of compact rows at a time, in one
read transaction (a snapshot: REPEATABLE READ on PostgreSQL, one deferred transaction on SQLite),
so memory holds a chunk and each version's state by player key, whatever the ledger's size. Each
chunk is rated by the batch kernel (the fold for team matches, :mod:`.bulk`) and compared with the
stored changes of the same sequence range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from ...batch.kernel import load_kernel
from ...core.engine import RatingResult
from ...core.fold import RatingState
from ...core.model import Match
from ...core.rules import Rules
from ...storage.indexes import index_faults
from ...storage.schema import MATCH_SLOTS
from . import bulk
from .ahead import ahead, snapshot_connection
from .bulk import (
    Blanks,
    Int64Array,
    KeyState,
    names_of,
    query_int64,
    rate_chunk,
    use_kernel,
)
from .packed import by_sequence_key, stored_changes, verify_chunks
from .types import VerifyReport
from .versions import VersionsMixin

__all__ = ["VerifyMixin", "replay"]

#: Most differences a report lists.
_MAX_MISMATCHES = 100
_END = 2**62
#: Player ids of team matches' players kept between chunks (a cache: about 100 bytes each).
_NAMES_KEPT = 50_000
#: Bytes of version states (ratings and games by player key) one pass over the ledger holds.
_STATE_BUDGET = 24 << 20


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


def _sink(size: int) -> Int64Array:
    """A writable int64 array of ``size`` entries that all share one element: what is written to
    it is lost (the last write wins), it costs 8 bytes whatever ``size``."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype=np.int64), shape=(size,), strides=(0,))


def _pair(row: Int64Array | None) -> tuple[int, int] | None:
    return None if row is None else (int(row[0]), int(row[1]))


def _chunks(
    raw: Any, pg: bool, versions: list[tuple[int, int]]
) -> Iterator[tuple[Int64Array, list[Int64Array | None]]]:
    """Each chunk of the ledger's rows and, for each of ``versions`` (``(id, last sequence)``),
    its stored changes in the chunk's range (``None``: the version ends before the chunk)."""
    for low, high, rows in verify_chunks(raw, pg, 0, _END):
        stored = [
            stored_changes(raw, pg, vid, low, min(high, through)) if low < through else None
            for vid, through in versions
        ]
        yield rows, stored


def _offset(progress: Callable[[int, int], None], before: int, total: int) -> Callable[[int, int], None]:
    """``progress`` of one pass, ``before`` matches of ``total`` done by the passes before it."""
    return lambda done, _: progress(before + done, total)


class VerifyMixin(VersionsMixin):
    """Checking the stored ratings against a replay."""

    def verify(self, progress: Callable[[int, int], None] | None = None) -> VerifyReport:
        """Replay the non-voided ledger with the rating core for every version and compare.

        Compares each stored rating change (before and after) and each player's final rating and
        match count. The active version must hold the whole non-voided ledger; an inactive version is
        a snapshot and must hold exactly the non-voided matches up to the last one it applied. The
        report lists the differences (at most 100): each version's changes in sequence order, then
        its players by id; and any index or key that is missing, unusable or not as declared
        (``index_faults``).
        ``progress(done, total)`` is called after every chunk of matches.

        Memory is flat in the ledger's size: one chunk of rows, and each version's state (16 bytes
        a player); when the versions' states exceed :data:`_STATE_BUDGET`, the ledger is read once
        for each group of versions that fits (``total`` then counts every pass). When the ledger is
        long enough for the batch kernel, the kernel is loaded before the first chunk is read
        (:func:`~sedma_elo.batch.kernel.load_kernel`): numba's compiler does not run after that, so
        its peak does not add to a chunk's.
        """
        report = VerifyReport()
        with self.db.read.connect() as c:
            conn = c.execution_options(isolation_level="REPEATABLE READ") if self._pg else c
            with conn.begin():
                self._verify_in(conn, report, progress)
                report.index_faults = index_faults(conn)
        del report.mismatches[_MAX_MISMATCHES:]
        return report

    def _verify_in(
        self, conn: Connection, report: VerifyReport, progress: Callable[[int, int], None] | None
    ) -> None:
        raw: Any = conn.connection.driver_connection
        size = int(raw.execute("SELECT coalesce(max(id), 0) + 1 FROM players").fetchone()[0])
        total = int(raw.execute("SELECT count(*) FROM matches WHERE NOT voided").fetchone()[0])
        if use_kernel(total):  # before any state or chunk is held: the compiler's peak alone
            load_kernel()
        versions = []
        for vid, active in raw.execute("SELECT id, active FROM rating_versions ORDER BY id").fetchall():
            through = _END if active else self._through(conn, int(vid))
            versions.append((int(vid), self._version_raw(raw, int(vid)).rules, through))
        report.versions = len(versions)
        # As many versions a pass over the ledger as their states (16 bytes a player each) fit in
        # the budget, at least one: memory stays flat in players x versions, for a re-read.
        per_pass = max(1, _STATE_BUDGET // (16 * size))
        passes = [versions[i : i + per_pass] for i in range(0, len(versions), per_pass)]
        # The ledger's keys have no foreign keys (0008_importfast): every one must name a player.
        # Which keys do is read once, for every pass.
        players = np.zeros(size, dtype=bool)
        players[query_int64(raw, self._pg, "SELECT id FROM players", (4,))[:, 0]] = True
        # A pass's progress counts on from the passes before it.
        for n, part in enumerate(passes):
            step = None if progress is None else _offset(progress, n * total, len(passes) * total)
            self._verify_pass(raw, part, players, total, report, step, first=n == 0)

    def _verify_pass(
        self,
        raw: Any,
        versions: list[tuple[int, Rules, int]],
        players: npt.NDArray[np.bool_],
        total: int,
        report: VerifyReport,
        progress: Callable[[int, int], None] | None,
        first: bool,
    ) -> None:
        """Replay the ledger once for ``versions`` (``(id, rules, last sequence)``) and compare;
        ``players[key]`` says whether a player key names a player (``len(players)`` keys)."""
        pg = self._pg
        size = len(players)
        # Shared by the versions: the sequence each key last played in, which verify never reads
        # (a key played in a version's replay iff its games count is above 0): one int64 seen as
        # ``size`` (stride 0), a sink for the raters' writes instead of 8 bytes a player; and the
        # names of the team matches' players, dropped between chunks once many (per player).
        last, names = _sink(size), dict[int, str]()
        checks = []
        for vid, rules, through in versions:
            ratings = np.full(size, rules.initial_rating, dtype=np.int64)
            state = KeyState(ratings, np.zeros(size, dtype=np.int64), last, names)
            checks.append(_Check(vid, rules, through, state))
        placeholders = Blanks(size)
        kernel = use_kernel(total)
        done = 0
        orphans = _orphans(raw) if first else []
        bounds = [(check.vid, check.through) for check in checks]
        with (
            self._chunk_reader(raw) as (reader, lookup),
            closing(ahead(_chunks(reader, pg, bounds), True)) as chunks,
        ):
            for rows, stored in chunks:
                if first:
                    report.matches += len(rows)
                keys = rows[:, 2:6]
                lost = ((keys >= size) | ((keys >= 0) & ~players[np.clip(keys, 0, size - 1)])).any(axis=1)
                if lost.any():  # reported, and left out of the replay (its keys index the state)
                    if first:
                        orphans += rows[lost, 0][: _MAX_MISMATCHES - len(orphans)].tolist()
                    rows = rows[~lost]
                for check, have in zip(checks, stored, strict=True):
                    if have is not None:
                        self._compare(lookup, check, rows, have, placeholders, kernel)
                if len(names) > _NAMES_KEPT:
                    names.clear()
                done += len(rows)
                if progress is not None:
                    progress(done, total)
                # Dropped before the next chunk is awaited (two chunks alive, not three), and
                # before the players' check after the last one.
                del rows, stored, keys, lost, have
        report.mismatches += [
            f"sequence {seq}: a player key or the version id names no row" for seq in sorted(orphans)
        ][:_MAX_MISMATCHES]
        for check in checks:
            report.players += self._check_players(raw, check)
            report.mismatches += check.changes + check.players

    def _compare(
        self,
        raw: Any,
        check: _Check,
        rows: Int64Array,
        have: Int64Array,
        placeholders: Blanks,
        kernel: bool,
    ) -> None:
        """Rate the chunk's ``rows`` up to the version's last sequence and compare the changes with
        the stored ones (``have``, by sequence then key); differences go to ``check.changes``."""
        # No copy of the chunk for a version that holds all of it (the active one).
        whole = not len(rows) or rows[-1, 0] <= check.through
        mine = rows if whole else rows[rows[:, 0] <= check.through]
        want = by_sequence_key(
            rate_chunk(raw, self._ph, mine, check.rules, check.state, placeholders, kernel)
        )
        if want.shape != have.shape or not np.array_equal(want, have):
            self._list_changes(raw, check, want, have)

    @contextmanager
    def _chunk_reader(self, raw: Any) -> Iterator[tuple[Any, Any]]:
        """The connection the ledger's chunks are read on, from a thread while this one rates, and
        the one this thread looks player ids up on. On PostgreSQL: a second connection in the same
        snapshot (``pg_export_snapshot``) reads, ``raw`` looks up. On SQLite ``raw`` reads (its
        transaction is the snapshot) and a second connection looks up: on ``raw`` a look-up would
        wait for the reader's whole packed chunk (sqlite3 serialises a connection's statements).
        A player row is never changed or deleted, so any later read gives a key's id.
        """
        if not self._pg:
            with self.db.read.connect() as c:
                yield raw, c.connection.driver_connection
            return
        with snapshot_connection(self.db, raw) as second:
            yield second, raw

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
        """Compare the version's stored player rows with the replay, streamed in batches of
        :data:`~.bulk.CHUNK` rows; return how many rows it has."""
        state, vid = check.state, check.vid
        seen = np.zeros(len(state.ratings), dtype=bool)
        bad: list[tuple[str, tuple[int, int] | None, tuple[int, int] | None]] = []
        count = 0
        # One statement in no order (a hash join, read once), not keyset pages by player id: with
        # no statistics, PostgreSQL sorted every remaining row for each page. Only the first
        # differences by player id are kept, as the pages' order gave.
        sql = (
            "SELECT pr.player_id, p.id, pr.rating, pr.matches_played FROM player_ratings pr"
            f" LEFT JOIN players p ON p.player_id = pr.player_id WHERE pr.version_id = {int(vid)}"
        )
        for rows in bulk.stream_rows(raw, self._pg, sql):
            for pid, key, rating, played in rows:
                stored = (int(rating), int(played))
                played_here = key is not None and key < len(seen) and state.games[key] > 0
                want = (int(state.ratings[key]), int(state.games[key])) if played_here else None
                if played_here:
                    seen[key] = True
                if stored != want:
                    bad.append((pid, stored, want))
                    if len(bad) >= 2 * _MAX_MISMATCHES:
                        bad.sort(key=lambda b: b[0])
                        del bad[_MAX_MISMATCHES:]
            count += len(rows)
        unstored = np.flatnonzero((state.games > 0) & ~seen)
        names = names_of(raw, self._ph, unstored[:_MAX_MISMATCHES].tolist())
        for key in unstored[:_MAX_MISMATCHES].tolist():
            bad.append((names[key], None, (int(state.ratings[key]), int(state.games[key]))))
        for pid, stored_row, want in sorted(bad, key=lambda b: b[0])[:_MAX_MISMATCHES]:
            check.players.append(
                f"version {vid}, player {pid}: stored (rating, matches) {stored_row}, replay {want}"
            )
        check.players.extend(_count_differences(raw, check)[:_MAX_MISMATCHES])
        return count


def _count_differences(raw: Any, check: _Check) -> list[str]:
    """The ratings whose stored count of players (``rating_counts``, a row of 0 as no row) differs
    from the replay's, by rating."""
    ratings = check.state.ratings[check.state.games > 0]
    values, counts = np.unique(ratings, return_counts=True)
    want = dict(zip(values.tolist(), counts.tolist(), strict=True))
    sql = f"SELECT rating, players FROM rating_counts WHERE version_id = {int(check.vid)} AND players <> 0"
    have = {int(r): int(n) for r, n in raw.execute(sql).fetchall()}
    return [
        f"version {check.vid}, rating {r}: stored count of players {have.get(r, 0)}, replay {want.get(r, 0)}"
        for r in sorted(want.keys() | have.keys())
        if have.get(r, 0) != want.get(r, 0)
    ]
