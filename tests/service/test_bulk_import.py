"""``Ledger.import_history`` (``sedma-elo import``): the bulk path stores what posting one by one stores."""

from __future__ import annotations

import random
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sedma_elo.batch.history import iter_lined, read_lined, write_matches
from sedma_elo.core.model import Match, PlayerStats
from sedma_elo.core.rules import REFERENCE_RULES
from sedma_elo.errors import HistoryError
from sedma_elo.service import Ledger
from sedma_elo.service.ledger import bulk, bulk_import, rebuild
from sedma_elo.service.ledger.rows import MATCH_FROM, STAT_COLUMNS
from sedma_elo.service.payload import submission_from_match
from sedma_elo.storage import libpq_url, open_database

_PLAYERS = ["ann", "bob", "cyd", "dan", "eve", "fay", "gus", "hal", "ivy", "jo", "Žofie", 'q"uote', "b\\s"]


def _history(n: int, seed: int, prefix: str = "m", teams: bool = False) -> list[Match]:
    """``n`` matches among :data:`_PLAYERS` with draws, statistics and times (a few 2-vs-2 if ``teams``)."""
    rng = random.Random(seed)
    start = datetime(2024, 5, 1, 9, 30)
    out = []
    for i in range(n):
        winner = rng.choice(["a", "b", "a", "b", "draw"])
        stats = [PlayerStats(*(rng.choice([0, 0, 1, 2, 7]) for _ in range(4))) for _ in range(4)]
        when = start + timedelta(minutes=37 * i, microseconds=rng.choice([0, 125]))
        if teams and i % 3 == 0:
            a1, a2, b1, b2 = rng.sample(_PLAYERS, 4)
            by_player = dict(zip((a1, a2, b1, b2), stats, strict=True))
            out.append(Match((a1, a2), (b1, b2), winner, by_player, f"{prefix}{i}", when))  # type: ignore[arg-type]
        else:
            a, b = rng.sample(_PLAYERS, 2)
            out.append(
                Match.single(a, b, winner, stats[0], stats[1], match_id=f"{prefix}{i}", played_at=when)  # type: ignore[arg-type]
            )
    return out


def _file(folder: Path, name: str, matches: Sequence[Match]) -> Path:
    path = folder / name
    write_matches(path, list(matches))
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def two_urls(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """Two empty databases of one kind (SQLite files, or two fresh PostgreSQL databases)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/bulk.db", f"sqlite:///{tmp_path}/posted.db"
    new: Callable[[], str] = request.getfixturevalue("new_pg_database")
    return new(), new()


def _ledger(url: str) -> Ledger:
    ledger = Ledger(open_database(url))
    ledger.ensure_version()
    return ledger


def _post_one_by_one(ledger: Ledger, matches: Sequence[Match]) -> None:
    """The ledger's normal path: one POST-sized batch per match."""
    for match in matches:
        [outcome] = ledger.apply([submission_from_match(match)])
        assert outcome.status == "created", outcome.error


_TIME_IN_DATA = re.compile(r',"created_at":"[^"]*"|^\["[^"]*"')


def _dump(ledger: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored row of the match tables, players by id (keys and write times left out)."""
    slots = "pa1.player_id, pa2.player_id, pb1.player_id, pb2.player_id"
    queries = {
        "matches": f"SELECT m.sequence, m.match_id, m.body_hash, m.played_at, m.winner, {slots},"
        f" {', '.join('m.' + c for c in STAT_COLUMNS)}, m.version_id, m.voided, m.void_reason"
        f" FROM {MATCH_FROM} ORDER BY m.sequence",
        "rating_changes": "SELECT rc.version_id, p.player_id, rc.sequence, rc.rating_before, rc.rating_after"
        " FROM rating_changes rc JOIN players p ON p.id = rc.player_key ORDER BY 1, 3, 2",
        "player_ratings": "SELECT version_id, player_id, rating, matches_played, last_sequence"
        " FROM player_ratings ORDER BY 1, 2",
        "players": "SELECT player_id FROM players ORDER BY 1",
        "change_events": "SELECT sequence, kind, version_id, data FROM change_events ORDER BY 1",
    }
    out = {}
    for name, sql in queries.items():
        rows = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in ledger.db.query(sql)]
        out[name] = rows
    out["change_events"] = [(*r[:3], _TIME_IN_DATA.sub("", str(r[3]))) for r in out["change_events"]]
    return out


def _import(ledger: Ledger, path: Path, *, skip_bad: bool = False) -> Any:
    source, errors = read_lined(path)
    assert errors == []
    return ledger.import_history(source, skip_bad=skip_bad)


@pytest.mark.parametrize("teams", [False, True], ids=["kernel", "fold-teams"])
def test_import_equals_posting_one_by_one(two_urls: tuple[str, str], tmp_path: Path, teams: bool) -> None:
    """Every stored row (matches, changes, ratings, players, feed) equals posting the matches one by one."""
    matches = _history(120, seed=1, teams=teams)
    path = _file(tmp_path, "h.jsonl" if teams else "h.csv", matches)
    bulk, posted = _ledger(two_urls[0]), _ledger(two_urls[1])
    try:
        report = _import(bulk, path)
        assert (report.created, report.repeated, report.refused) == (120, 0, [])
        _post_one_by_one(posted, matches)
        got, want = _dump(bulk), _dump(posted)
        assert len(want["change_events"]) == 120 and len(want["rating_changes"]) >= 240
        assert got == want
        assert bulk.verify().ok
    finally:
        bulk.db.dispose()
        posted.db.dispose()


def test_reimporting_the_same_file_is_all_repeats(two_urls: tuple[str, str], tmp_path: Path) -> None:
    """Importing a file again counts every match as repeated and changes no row."""
    path = _file(tmp_path, "h.csv", _history(60, seed=2))
    ledger = _ledger(two_urls[0])
    try:
        _import(ledger, path)
        before = _dump(ledger)
        report = _import(ledger, path)
        assert (report.created, report.repeated, report.refused) == (0, 60, [])
        assert _dump(ledger) == before
    finally:
        ledger.db.dispose()


def test_a_conflicting_row_refuses_the_whole_file(two_urls: tuple[str, str], tmp_path: Path) -> None:
    """A file with one stored id under a different body is refused, its line named, nothing stored."""
    ledger = _ledger(two_urls[0])
    try:
        _import(ledger, _file(tmp_path, "first.csv", _history(30, seed=3)))
        before = _dump(ledger)
        later = _history(20, seed=4, prefix="n")
        stored = _history(30, seed=3)[7]
        changed = Match.single(
            stored.team_b[0], stored.team_a[0], "a", match_id=stored.match_id, played_at=stored.played_at
        )
        mixed = _file(tmp_path, "mixed.csv", [*later[:5], changed, *later[5:]])
        with pytest.raises(HistoryError, match=r"line 7: match_id: 'm7' is already in the ledger"):
            _import(ledger, mixed)
        assert _dump(ledger) == before
    finally:
        ledger.db.dispose()


def test_skip_bad_leaves_out_the_conflicting_row(two_urls: tuple[str, str], tmp_path: Path) -> None:
    """With skip_bad the conflicting row is reported and left out; the others are stored."""
    ledger = _ledger(two_urls[0])
    try:
        first = _history(10, seed=5)
        _import(ledger, _file(tmp_path, "first.csv", first))
        changed = Match.single(
            first[2].team_b[0], first[2].team_a[0], "draw", match_id="m2", played_at=first[2].played_at
        )
        later = _history(4, seed=6, prefix="n")
        report = _import(ledger, _file(tmp_path, "mixed.csv", [first[0], changed, *later]), skip_bad=True)
        assert (report.created, report.repeated) == (4, 1)
        assert report.refused == ["line 3: match_id: 'm2' is already in the ledger with a different match"]
        assert bulk_ids(ledger) == [m.match_id for m in [*first, *later]]
        assert ledger.verify().ok
    finally:
        ledger.db.dispose()


def bulk_ids(ledger: Ledger) -> list[str | None]:
    """The ledger's match ids in sequence order."""
    return [m.match_id for _, m in ledger.ledger()]


def _reset(url: str) -> None:
    if url.startswith("sqlite"):
        for suffix in ("", "-wal", "-shm"):
            Path(url.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)
        return
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


@pytest.fixture
def reusable_urls(two_urls: tuple[str, str]) -> Iterator[tuple[str, str]]:
    """:func:`two_urls`, emptied before each use by :func:`_reset` (for hypothesis examples)."""
    yield two_urls


@settings(max_examples=3, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(split=st.integers(0, 40), seed=st.integers(0, 2**16), posted_first=st.booleans())
def test_import_into_a_non_empty_ledger_continues_the_ratings(
    reusable_urls: tuple[str, str], split: int, seed: int, posted_first: bool
) -> None:
    """Matches posted (or imported) first, then a file imported: the rows of posting all one by one."""
    matches = _history(40, seed=seed)
    for url in reusable_urls:
        _reset(url)
    bulk, posted = _ledger(reusable_urls[0]), _ledger(reusable_urls[1])
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if posted_first:
                _post_one_by_one(bulk, matches[:split])
            else:
                _import(bulk, _file(Path(tmp), "first.csv", matches[:split]))
            report = _import(bulk, _file(Path(tmp), "rest.csv", matches))  # the first part again: repeats
        assert (report.created, report.repeated) == (40 - split, split)
        _post_one_by_one(posted, matches)
        assert _dump(bulk) == _dump(posted)
        assert bulk.verify().ok
    finally:
        bulk.db.dispose()
        posted.db.dispose()


def test_player_rows_written_a_few_at_a_time_equal_posting_one_by_one(
    two_urls: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two player rows a statement (some updated, some new) the rows are those of posting."""
    monkeypatch.setattr(rebuild, "PLAYER_CHUNK", 2)
    matches = _history(60, seed=4, teams=True)
    bulk, posted = _ledger(two_urls[0]), _ledger(two_urls[1])
    try:
        _post_one_by_one(bulk, matches[:10])  # some players with a stored row: updated
        report = _import(bulk, _file(tmp_path, "rest.jsonl", matches))
        assert (report.created, report.repeated) == (50, 10)
        _post_one_by_one(posted, matches)
        got, want = _dump(bulk), _dump(posted)
        assert len(want["player_ratings"]) == len(_PLAYERS)
        assert got == want
    finally:
        bulk.db.dispose()
        posted.db.dispose()


#: Rules where the games played before a match (from the stored standing) and the margin reach K.
_GAMES_RULES = REFERENCE_RULES.replace(
    version="9.0", initial_rating=1500, k_new_player_games=3, k_new_player_multiplier=2.0, margin_scale=0.5
)


def test_import_under_rules_that_read_games_played(two_urls: tuple[str, str], tmp_path: Path) -> None:
    """Under rules reading games played, an import onto posted matches equals posting them all."""
    matches = _history(60, seed=7)
    ledgers = []
    try:
        for url in two_urls:
            ledger = Ledger(open_database(url))
            ledger.ensure_version(_GAMES_RULES)
            ledgers.append(ledger)
        bulk, posted = ledgers
        _post_one_by_one(bulk, matches[:25])
        _import(bulk, _file(tmp_path, "rest.csv", matches[25:]))
        _post_one_by_one(posted, matches)
        assert _dump(bulk) == _dump(posted)
        assert bulk.verify().ok
    finally:
        for ledger in ledgers:
            ledger.db.dispose()


def _import_streamed(ledger: Ledger, path: Path, chunk: int, *, skip_bad: bool = False) -> Any:
    """``sedma-elo import``'s way: the file read ``chunk`` lines at a time, imported a chunk at a time."""
    parts = (part for part, _ in iter_lined(path, skip_bad=skip_bad, chunk=chunk))
    return ledger.import_history(parts, skip_bad=skip_bad, chunk=chunk)


def test_a_mixed_file_is_rated_by_rate_chunk_as_posting_one_by_one(
    two_urls: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1-vs-1 and team matches streamed through rate_chunk (kernel on): the rows of posting one by one."""
    monkeypatch.setattr(bulk, "KERNEL_FROM", 0)
    kernel_flags: list[bool] = []
    real = bulk_import.rate_chunk

    def spy(*args: Any) -> Any:
        kernel_flags.append(args[-1])
        return real(*args)

    monkeypatch.setattr(bulk_import, "rate_chunk", spy)
    matches = _history(100, seed=8, teams=True)
    path = _file(tmp_path, "mixed.jsonl", matches)
    imported, posted = _ledger(two_urls[0]), _ledger(two_urls[1])
    try:
        report = _import_streamed(imported, path, chunk=30)
        assert (report.created, report.repeated, report.refused) == (100, 0, [])
        assert kernel_flags == [True] * 4
        _post_one_by_one(posted, matches)
        assert _dump(imported) == _dump(posted)
        assert imported.verify().ok
    finally:
        imported.db.dispose()
        posted.db.dispose()


def _with_line(path: Path, line: str) -> Path:
    with path.open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    return path


@pytest.mark.parametrize("same_body", [True, False], ids=["same-body", "other-body"])
def test_a_match_id_again_in_a_later_chunk_refuses_the_file(
    two_urls: tuple[str, str], tmp_path: Path, same_body: bool
) -> None:
    """A match id of the first chunk again on line 32 (fourth chunk) refuses the file; nothing stored."""
    path = _file(tmp_path, "h.csv", _history(30, seed=9))
    fields = path.read_text().splitlines()[4].split(",")  # m3, line 5
    if not same_body:
        fields[4] = "b" if fields[4] == "a" else "a"  # the winner
    _with_line(path, ",".join(fields))
    ledger = _ledger(two_urls[0])
    try:
        empty = _dump(ledger)
        with pytest.raises(HistoryError, match=r"^line 32: match_id: duplicate 'm3'"):
            _import_streamed(ledger, path, chunk=10)
        assert _dump(ledger) == empty
    finally:
        ledger.db.dispose()


def test_skip_bad_leaves_out_a_match_id_again_in_a_later_chunk(
    two_urls: tuple[str, str], tmp_path: Path
) -> None:
    """With skip_bad the later copy of an id is reported at its line and the rest of the file stored."""
    matches = _history(30, seed=10)
    path = _file(tmp_path, "h.csv", matches)
    _with_line(path, path.read_text().splitlines()[2])  # m1, line 3
    ledger = _ledger(two_urls[0])
    try:
        report = _import_streamed(ledger, path, chunk=10, skip_bad=True)
        assert (report.created, report.repeated) == (30, 0)
        assert report.refused == ["line 32: match_id: duplicate 'm1' (first on an earlier line of the file)"]
        assert bulk_ids(ledger) == [m.match_id for m in matches]
    finally:
        ledger.db.dispose()


# ------------------------------------------------- PostgreSQL: the load without indexes, ANALYZE
# The versions' partitions too, and whether each index is valid: the parent's definitions alone
# stayed equal when the sequence index came back on no partition (migration 0013).
_INDEX_DEFS = (
    "SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisvalid FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid"
    " WHERE t.relname IN ('matches', 'rating_changes', 'change_events')"
    " OR t.relname ~ '^rating_changes_v[0-9]+$' ORDER BY 1"
)
_CONSTRAINTS = (
    "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint"
    " WHERE conrelid IN ('matches'::regclass, 'rating_changes'::regclass, 'change_events'::regclass)"
    " ORDER BY 1"
)


def _indexes(ledger: Ledger) -> tuple[list[Any], list[Any]]:
    """The ledger tables' index definitions and constraints, as PostgreSQL's catalog states them."""
    return list(ledger.db.query(_INDEX_DEFS)), list(ledger.db.query(_CONSTRAINTS))


@pytest.mark.postgres
def test_an_import_into_an_empty_ledger_builds_the_indexes_again(
    new_pg_database: Callable[[], str], tmp_path: Path
) -> None:
    """After an import into an empty PostgreSQL ledger its tables have the indexes they had before."""
    ledger = _ledger(new_pg_database())
    try:
        before = _indexes(ledger)
        names = {name for name, *_ in before[0]}
        assert {"rating_changes_pkey", "rating_changes_v1_sequence"} <= names
        _import_streamed(ledger, _file(tmp_path, "h.csv", _history(40, seed=11)), chunk=15)
        assert _indexes(ledger) == before
        assert ledger.verify().ok
    finally:
        ledger.db.dispose()


@pytest.mark.postgres
def test_a_refused_file_leaves_an_empty_ledger_with_its_indexes(
    new_pg_database: Callable[[], str], tmp_path: Path
) -> None:
    """A file refused in its third chunk leaves an empty PostgreSQL ledger's rows and indexes as they were."""
    path = _file(tmp_path, "h.csv", _history(30, seed=12))
    _with_line(path, path.read_text().splitlines()[3])  # m2 again, line 32
    ledger = _ledger(new_pg_database())
    try:
        empty, indexes = _dump(ledger), _indexes(ledger)
        with pytest.raises(HistoryError, match=r"^line 32: match_id: duplicate 'm2'"):
            _import_streamed(ledger, path, chunk=12)
        assert (_dump(ledger), _indexes(ledger)) == (empty, indexes)
    finally:
        ledger.db.dispose()


class _ReadDuringImport:
    """A progress sink that, after each chunk, reads ``rating_changes`` from another connection
    waiting at most 50 ms for a lock, and records whether the read got through."""

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(libpq_url(url), autocommit=True)
        self.conn.execute("SET lock_timeout = '50ms'")
        self.passed: list[bool] = []

    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None) -> None:
        try:
            self.conn.execute("SELECT count(*) FROM rating_changes").fetchone()
            self.passed.append(True)
        except psycopg.errors.LockNotAvailable:
            self.passed.append(False)


@pytest.mark.postgres
@pytest.mark.parametrize("empty", [True, False], ids=["empty-ledger", "non-empty-ledger"])
def test_readers_of_rating_changes_wait_only_for_an_import_into_an_empty_ledger(
    new_pg_database: Callable[[], str], tmp_path: Path, empty: bool
) -> None:
    """Into an empty ledger the import holds rating_changes (no index) until it commits; into a
    non-empty one it keeps the indexes and readers pass; both store what posting one by one does."""
    url, posted_url = new_pg_database(), new_pg_database()
    matches = _history(40, seed=13)
    ledger, posted = _ledger(url), _ledger(posted_url)
    reader = _ReadDuringImport(url)
    try:
        if not empty:
            _import(ledger, _file(tmp_path, "first.csv", matches[:10]))
        path = _file(tmp_path, "rest.csv", matches if empty else matches[10:])
        ledger.import_history((part for part, _ in iter_lined(path, chunk=10)), progress=reader, chunk=10)
        assert reader.passed == [not empty] * len(reader.passed) and reader.passed
        _post_one_by_one(posted, matches)
        assert _dump(ledger) == _dump(posted)
    finally:
        reader.conn.close()
        ledger.db.dispose()
        posted.db.dispose()


@pytest.mark.postgres
def test_an_import_leaves_planner_statistics(new_pg_database: Callable[[], str], tmp_path: Path) -> None:
    """After an import PostgreSQL has column statistics of the tables it filled (ANALYZE ran)."""
    filled = {"matches", "rating_changes", "change_events", "players", "player_ratings"}
    ledger = _ledger(new_pg_database())
    try:
        _import(ledger, _file(tmp_path, "h.csv", _history(40, seed=14)))
        stats = ledger.db.query("SELECT DISTINCT tablename FROM pg_stats WHERE schemaname = 'public'")
        assert filled <= {table for (table,) in stats}
    finally:
        ledger.db.dispose()
