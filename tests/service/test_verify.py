"""Verify streams: the player rows in keyset chunks, the team players' names dropped between chunks,
and the command loads no web stack (service/ledger/verify.py)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from ledgers import empty_ledger
from sqlalchemy import delete, update

from sedma_elo import REFERENCE_RULES, Match
from sedma_elo.service.ledger import bulk, verify
from sedma_elo.storage.schema import player_ratings, rating_changes

#: Ten players, p0 to p9, each in two one-against-one matches.
MATCHES = [Match.single(f"p{i % 10}", f"p{(i + 1) % 10}", "a", match_id=f"m{i}") for i in range(10)]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of three rows (ledger and player rows), the fold path (numba not needed)."""
    monkeypatch.setattr(bulk, "CHUNK", 3)
    monkeypatch.setattr(bulk, "KERNEL_FROM", 10**9)
    monkeypatch.setattr(bulk, "_JIT_MODULE", "not.loaded")


def test_verify_names_a_tampered_player_row_in_a_later_chunk(db_url: str, small_chunks: None) -> None:
    """With three player rows a chunk, a changed rating of the last player by id is still reported."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(MATCHES)
        assert ledger.verify().ok
        with ledger.db.begin_write() as conn:
            conn.execute(update(player_ratings).where(player_ratings.c.player_id == "p9").values(rating=1234))
        report = ledger.verify()
        assert report.players == 10
        assert len(report.mismatches) == 1
        assert report.mismatches[0].startswith("version 1, player p9: stored (rating, matches) (1234, 2)")


def test_verify_names_a_missing_player_row_in_a_later_chunk(db_url: str, small_chunks: None) -> None:
    """A deleted player row past the first chunks is reported as stored None, with the replay's row."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(MATCHES)
        with ledger.db.begin_write() as conn:
            conn.execute(delete(player_ratings).where(player_ratings.c.player_id == "p8"))
        report = ledger.verify()
        assert report.players == 9
        assert len(report.mismatches) == 1
        assert report.mismatches[0].startswith(
            "version 1, player p8: stored (rating, matches) None, replay ("
        )


def test_verify_names_team_players_after_dropping_their_cached_names(
    db_url: str, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the names cache emptied after every chunk, team matches still verify and a tampered
    change of a team player in a later chunk names that player."""
    monkeypatch.setattr(verify, "_NAMES_KEPT", 0)
    teams = [Match(("ann", "ben"), ("cid", "dan"), "a" if i % 3 else "b", {}, f"t{i}") for i in range(8)]
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(teams)
        assert ledger.verify().ok
        seq = int(ledger.db.query("SELECT sequence FROM matches WHERE match_id = 't7'")[0][0])
        key = int(ledger.db.query("SELECT id FROM players WHERE player_id = 'dan'")[0][0])
        with ledger.db.begin_write() as conn:
            conn.execute(
                update(rating_changes)
                .where(rating_changes.c.sequence == seq, rating_changes.c.player_key == key)
                .values(rating_after=rating_changes.c.rating_after + 1)
            )
        report = ledger.verify()
        assert report.mismatches[0].startswith(f"version 1, sequence {seq}, player dan: stored")


def test_verify_command_loads_no_web_stack(tmp_path: Path) -> None:
    """`sedma-elo verify` runs without importing FastAPI, Starlette, Jinja or the web pages."""
    with empty_ledger("sqlite://", str(tmp_path)) as ledger:
        ledger.import_matches(MATCHES)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from sedma_elo.cli import app\n"
        f"result = CliRunner().invoke(app, ['verify', '--database-url', {url!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(sorted(m for m in ('fastapi', 'starlette', 'jinja2', 'sedma_elo.web') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_verify_in_one_pass_per_version_names_a_tampered_change_of_the_second(
    db_url: str, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for one version's state a pass, both versions are checked, the ledger counted once."""
    monkeypatch.setattr(verify, "_STATE_BUDGET", 1)
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(MATCHES)
        second = ledger.rerate(REFERENCE_RULES.replace(version="9", k_top=20), "k20", activate=False).id
        assert ledger.verify().ok
        with ledger.db.begin_write() as conn:
            conn.execute(
                update(rating_changes)
                .where(rating_changes.c.version_id == second, rating_changes.c.sequence == 9)
                .values(rating_before=rating_changes.c.rating_before + 1)
            )
        seen: list[tuple[int, int]] = []
        report = ledger.verify(progress=lambda done, total: seen.append((done, total)))
        assert (report.versions, report.matches, report.players) == (2, 10, 20)
        assert seen[-1] == (20, 20)
        assert report.mismatches[0].startswith(f"version {second}, sequence 9, player p")


def test_the_last_sequence_sink_costs_one_entry_whatever_its_size() -> None:
    """Verify's unread last-sequence state is one shared int64 that takes the raters' writes."""
    sink = verify._sink(1_000_000)
    sink[999_999] = 7
    bulk.np.maximum.at(sink, bulk.np.array([3, 500_000]), bulk.np.array([9, 4]))
    assert sink.shape == (1_000_000,)
    assert sink.base is not None and sink.base.base is not None and sink.base.base.nbytes == 8


def test_verify_is_not_ok_with_an_index_missing(db_url: str) -> None:
    """A dropped index makes the report not ok, with the ratings all equal to the replay."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(MATCHES)
        with ledger.db.begin_write() as conn:
            conn.exec_driver_sql("DROP INDEX ix_player_ratings_rank")
        report = ledger.verify()
        assert report.mismatches == []
        assert [f.split(":")[0] for f in report.index_faults] == [
            "index ix_player_ratings_rank of player_ratings is missing"
        ]
        assert not report.ok
