"""cli/ledger_commands.py: import, export, verify, void, db upgrade and ratings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import update
from typer.testing import CliRunner

from sedma_elo import REFERENCE_RULES, Match, rate
from sedma_elo.batch.history import write_matches
from sedma_elo.cli import app
from sedma_elo.service import Ledger
from sedma_elo.storage import open_database
from sedma_elo.storage.schema import player_ratings

runner = CliRunner()


def _history(path: Path) -> list[Match]:
    day = datetime(2026, 11, 1, tzinfo=UTC)
    matches = [
        Match.single("ann", "ben", "a", match_id="h-1", played_at=day),
        Match.single("ben", "cat", "b", match_id="h-2", played_at=day + timedelta(hours=1)),
        Match.single("ann", "cat", "draw", match_id="h-3", played_at=day + timedelta(hours=2)),
    ]
    write_matches(path, matches)
    return matches


def test_import_then_export_round_trips_and_verify_passes(db_url: str, tmp_path: Path) -> None:
    """Importing a file applies it in order; importing again repeats; export writes the same matches."""
    source = tmp_path / "in.csv"
    matches = _history(source)
    first = runner.invoke(app, ["import", str(source), "--database-url", db_url])
    assert first.exit_code == 0 and "3 applied" in first.output
    again = runner.invoke(app, ["import", str(source), "--database-url", db_url])
    assert "0 applied, 3 already in the ledger" in again.output
    out = tmp_path / "out.csv"
    assert runner.invoke(app, ["export", str(out), "--database-url", db_url]).exit_code == 0
    assert out.read_text() == source.read_text()
    assert runner.invoke(app, ["verify", "--database-url", db_url]).exit_code == 0
    ratings: dict[str, int] = {}
    for m in matches:
        ratings.update(rate(m, ratings, REFERENCE_RULES).new_ratings)
    db = open_database(db_url)
    try:
        ledger = Ledger(db)
        assert {p: ledger.get_player(p).rating for p in ratings} == ratings
    finally:
        db.dispose()


def test_import_refuses_a_bad_file_naming_the_line(db_url: str, tmp_path: Path) -> None:
    """A bad row is reported with its line and field, and nothing is stored."""
    bad = tmp_path / "bad.csv"
    _history(bad)
    lines = bad.read_text().splitlines()
    column = lines[0].split(",").index("bad_moves_a")
    cells = lines[2].split(",")
    cells[column] = "-1"
    lines[2] = ",".join(cells)
    bad.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["import", str(bad), "--database-url", db_url])
    assert result.exit_code == 2
    assert "line 3" in result.output and "bad_moves_a" in result.output
    db = open_database(db_url)
    try:
        assert Ledger(db).ledger_size() == 0
    finally:
        db.dispose()


def test_verify_fails_on_a_tampered_rating(db_url: str, tmp_path: Path) -> None:
    """Changing a stored rating behind the service's back makes verify exit 1."""
    source = tmp_path / "in.csv"
    _history(source)
    runner.invoke(app, ["import", str(source), "--database-url", db_url])
    db = open_database(db_url)
    with db.write.begin() as conn:
        conn.execute(update(player_ratings).where(player_ratings.c.player_id == "ann").values(rating=1234))
    db.dispose()
    result = runner.invoke(app, ["verify", "--database-url", db_url])
    assert result.exit_code == 1
    assert "ann" in result.output


def test_void_and_rerate_commands(db_url: str, tmp_path: Path) -> None:
    """void and ratings rerate/activate/list do what the API does."""
    source = tmp_path / "in.csv"
    _history(source)
    runner.invoke(app, ["import", str(source), "--database-url", db_url])
    assert runner.invoke(app, ["void", "h-1", "--reason", "test", "--database-url", db_url]).exit_code == 0
    rules = tmp_path / "r.toml"
    REFERENCE_RULES.replace(version="9", k_top=20).save(rules)
    r = runner.invoke(app, ["ratings", "rerate", str(rules), "--database-url", db_url])
    assert r.exit_code == 0 and "active" in r.output
    assert runner.invoke(app, ["ratings", "activate", "1", "--database-url", db_url]).exit_code == 0
    listed = runner.invoke(app, ["ratings", "list", "--database-url", db_url])
    assert "reference@9" in listed.output
    assert runner.invoke(app, ["verify", "--database-url", db_url]).exit_code == 0


def test_db_upgrade_is_repeatable(db_url: str) -> None:
    """Running the migrations twice is harmless."""
    for _ in range(2):
        assert runner.invoke(app, ["db", "upgrade", "--database-url", db_url]).exit_code == 0


def test_export_jsonl_keeps_team_matches_and_reimports_to_the_same_ratings(
    db_url: str, tmp_path: Path
) -> None:
    """A ledger with a 2-vs-2 match and no played_at exports to JSON Lines and re-imports equal."""
    db = open_database(db_url)
    try:
        ledger = Ledger(db)
        ledger.ensure_version()
        team = Match(("ann", "ben"), ("cat", "dan"), "draw", {}, "t-1")
        ledger.import_matches([team, Match.single("ann", "cat", "a", match_id="t-2")])
        want = {p: ledger.get_player(p).rating for p in ("ann", "ben", "cat", "dan")}
    finally:
        db.dispose()
    out = tmp_path / "ledger.jsonl"
    assert runner.invoke(app, ["export", str(out), "--database-url", db_url]).exit_code == 0
    fresh = f"sqlite:///{tmp_path}/fresh.db"
    result = runner.invoke(app, ["import", str(out), "--database-url", fresh])
    assert result.exit_code == 0, result.output
    db = open_database(fresh)
    try:
        assert {p: Ledger(db).get_player(p).rating for p in want} == want
    finally:
        db.dispose()


def test_import_refuses_a_conflicting_file_with_status_2(db_url: str, tmp_path: Path) -> None:
    """A file whose match id is stored with another body: status 2, the line named, nothing stored."""
    source = tmp_path / "in.csv"
    _history(source)
    assert runner.invoke(app, ["import", str(source), "--database-url", db_url]).exit_code == 0
    lines = source.read_text().splitlines()
    lines[2] = lines[2].replace(",a,", ",b,") if ",a," in lines[2] else lines[2].replace(",b,", ",a,")
    lines.append(lines[1].replace("h-1", "h-9"))
    source.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["import", str(source), "--database-url", db_url, "--progress"])
    assert result.exit_code == 2
    assert "line 3: match_id: 'h-2' is already in the ledger" in result.stderr
    assert "importing" in result.stderr  # the progress bar's phase
    db = open_database(db_url)
    try:
        assert Ledger(db).ledger_size() == 3
    finally:
        db.dispose()


def _revision(url: str) -> str:
    """The database's Alembic revision, read without migrating it."""
    db = open_database(url, migrate=False)
    try:
        with db.read.connect() as conn:
            return str(conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one())
    finally:
        db.dispose()


def test_db_downgrade_rolls_back_one_revision_and_upgrade_brings_it_back(db_url: str) -> None:
    """`db downgrade REV --yes` leaves the schema at REV; `db upgrade` returns it to the newest."""
    assert runner.invoke(app, ["db", "upgrade", "--database-url", db_url]).exit_code == 0
    newest = _revision(db_url)
    result = runner.invoke(app, ["db", "downgrade", "0013_import_index", "--yes", "--database-url", db_url])
    assert result.exit_code == 0, result.output
    assert _revision(db_url) == "0013_import_index"
    assert runner.invoke(app, ["db", "upgrade", "--database-url", db_url]).exit_code == 0
    assert _revision(db_url) == newest


def test_db_downgrade_needs_yes_and_a_known_revision_below(tmp_path: Path) -> None:
    """Without --yes, to a revision this release lacks or to one above the database's: exit 2, a
    message, the schema untouched."""
    url = f"sqlite:///{tmp_path}/l.db"
    assert runner.invoke(app, ["db", "upgrade", "--database-url", url]).exit_code == 0
    newest = _revision(url)
    refused = runner.invoke(app, ["db", "downgrade", "0013_import_index", "--database-url", url])
    assert refused.exit_code == 2 and "--yes" in refused.output
    unknown = runner.invoke(app, ["db", "downgrade", "0099_nope", "--yes", "--database-url", url])
    assert unknown.exit_code == 2 and "revision: unknown revision '0099_nope'" in unknown.output
    assert _revision(url) == newest
    down = ["db", "downgrade", "0012_partitions", "--yes", "--database-url", url]
    assert runner.invoke(app, down).exit_code == 0
    up = runner.invoke(app, ["db", "downgrade", "0013_import_index", "--yes", "--database-url", url])
    assert up.exit_code == 2 and "is not below the database's revision '0012_partitions'" in up.output
    assert _revision(url) == "0012_partitions"


def test_a_database_from_a_newer_release_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """A schema at a revision this release lacks: commands exit 2 naming both revisions, no traceback."""
    url = f"sqlite:///{tmp_path}/n.db"
    assert runner.invoke(app, ["db", "upgrade", "--database-url", url]).exit_code == 0
    db = open_database(url, migrate=False)
    try:
        with db.write.begin() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0099_future'")
    finally:
        db.dispose()
    for args in (["verify"], ["db", "upgrade"], ["db", "downgrade", "0013_import_index", "--yes"]):
        result = runner.invoke(app, [*args, "--database-url", url])
        assert result.exit_code == 2, args
        assert "revision '0099_future'" in result.output and "Traceback" not in result.output
        assert "sedma-elo db downgrade" in result.output
    assert _revision(url) == "0099_future"
