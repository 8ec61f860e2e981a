"""Ledger commands: import, export, verify, void, db (upgrade, downgrade, prewarm), ratings (rerate,
activate, list)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..core.rules import load_rules
from ..errors import SedmaEloError
from . import app
from .errors import fail, user_errors
from .ledgers import create_database, open_ledger
from .options import DatabaseUrl, OutOption, ProgressOption, RulesOption, SkipBad, StoreCareers, one_path
from .progress import ProgressBar, show_progress

if TYPE_CHECKING:
    from ..batch.history import HistoryArrays, LinedMatches
    from ..service.ledger import Ledger

console = Console()
err_console = Console(stderr=True)

db_app = typer.Typer(
    help="Database commands: the schema (upgrade, downgrade), prewarm.", no_args_is_help=True
)
ratings_app = typer.Typer(
    help="Ratings versions: re-rate under new rules, list, activate.", no_args_is_help=True
)
app.add_typer(db_app, name="db")
app.add_typer(ratings_app, name="ratings")


def _store_careers(ledger: Ledger, min_matches: int | None, bar: ProgressBar) -> int:
    """The busiest players' page summaries stored, as a phase of ``bar`` (``--store-careers``,
    ``ratings store-careers``; ``None``: the ledger's default bound, 0: none); how many."""
    if min_matches == 0:
        return 0
    bar.phase("page summaries", None)
    if min_matches is None:
        return ledger.store_careers(progress=bar.update)
    return ledger.store_careers(min_matches, progress=bar.update)


# ---------------------------------------------------------------------------- import / export
@app.command("import")
def import_history(
    path: Annotated[
        Path,
        typer.Argument(help="Match history: CSV or JSON Lines, optionally .gz.", exists=True, dir_okay=False),
    ],
    database_url: DatabaseUrl = None,
    skip_bad: SkipBad = False,
    store_careers: StoreCareers = None,
    progress: ProgressOption = None,
) -> None:
    """Apply a history file to the ledger in one transaction: the rows POST /v1/matches would store.

    A match already in the ledger with the same body counts as repeated; one with a different body
    refuses the whole file (exit 2, the line named, nothing stored) unless --skip-bad leaves it out.
    """
    from ..batch.history import iter_lined

    errors: list[SedmaEloError] = []
    with ProgressBar(show_progress(progress)) as bar:
        bar.phase(f"reading {path.name}")
        stream = iter_lined(path, skip_bad=skip_bad)
        try:
            # The first chunk before the database: a file that is not a history creates nothing.
            head = next(stream)
        except SedmaEloError as exc:
            raise fail(exc) from exc

        def chunks() -> Iterator[HistoryArrays | LinedMatches]:
            """The file a chunk at a time (memory holds one), its skipped rows kept for the report."""
            for part, skipped in itertools.chain([head], stream):
                errors.extend(skipped)
                yield part

        with user_errors(), open_ledger(database_url, create=True) as ledger:
            report = ledger.import_history(chunks(), skip_bad=skip_bad, progress=bar)
            _store_careers(ledger, store_careers, bar)
    for e in errors:
        err_console.print(f"skipped {e}", highlight=False)
    for refusal in report.refused:
        err_console.print(f"skipped {refusal}", highlight=False)
    console.print(
        f"{report.created} applied, {report.repeated} already in the ledger, "
        f"{len(errors) + len(report.refused)} bad rows skipped."
    )


@app.command("export")
def export_history(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="File to write: CSV, or JSON Lines (.jsonl, needed for 2-vs-2); .gz compresses.",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    out: OutOption = None,
    database_url: DatabaseUrl = None,
    include_voided: Annotated[
        bool, typer.Option("--include-voided", help="Also write voided matches.")
    ] = False,
) -> None:
    """Write the ledger, in sequence order, as a match-history file that `import` reads back."""
    from ..batch.history import write_matches

    with user_errors():
        target = one_path(("FILE", path), ("--out", out))
        assert target is not None
        with open_ledger(database_url) as ledger:
            matches = [m for _, m in ledger.ledger(include_voided=include_voided)]
        write_matches(target, matches)
    console.print(f"Wrote {len(matches)} matches to {target}.")


# ---------------------------------------------------------------------------- verify / void
@app.command()
def verify(database_url: DatabaseUrl = None, progress: ProgressOption = None) -> None:
    """Replay the ledger with the rating core and compare with the stored ratings, and check the
    indexes; exit 1 on a mismatch or an index at fault."""
    from .heap import fix_mmap_threshold

    fix_mmap_threshold()  # flat resident memory over a long ledger (cli/heap.py)
    with user_errors(), open_ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
        bar.phase("verify", None)
        report = ledger.verify(progress=bar.update)
    for line in report.mismatches:
        err_console.print(f"[red]mismatch[/red] {line}")
    for line in report.index_faults:
        err_console.print(f"[red]index[/red] {line}")
    console.print(
        f"{report.versions} ratings version(s), {report.matches} matches, {report.players} player ratings: "
        + (f"{len(report.mismatches)} mismatch(es)." if report.mismatches else "all equal to a pure replay.")
        + (f" {len(report.index_faults)} index fault(s)." if report.index_faults else "")
    )
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def void(
    match_id: Annotated[str, typer.Argument(help="The match to void.")],
    reason: Annotated[str, typer.Option(help="Why (kept with the match).")] = "",
    database_url: DatabaseUrl = None,
    store_careers: StoreCareers = None,
    progress: ProgressOption = None,
) -> None:
    """Void a match: its effects and everything after it are recomputed from the ledger."""
    from ..core.ids import check_id

    try:
        match_id = check_id("match_id", match_id)
        with open_ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
            bar.phase("rebuild", None)
            ledger.void(match_id, reason, progress=bar.update)
            _store_careers(ledger, store_careers, bar)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Voided {match_id}.")


# ---------------------------------------------------------------------------- db / ratings
@db_app.command("upgrade")
def db_upgrade(database_url: DatabaseUrl = None) -> None:
    """Create or upgrade the schema to the newest migration (safe to repeat)."""
    from ..storage import normalize_url

    create_database(database_url)
    console.print(f"Schema of {normalize_url(database_url).split('@')[-1]} is up to date.")


@db_app.command("downgrade")
def db_downgrade(
    revision: Annotated[
        str, typer.Argument(help="The revision to go down to (e.g. 0013_import_index), or base.")
    ],
    yes: Annotated[bool, typer.Option("--yes", help="Go on: a downgrade may drop tables and data.")] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """Roll the schema back to an earlier revision, before running the release that expects it."""
    from ..storage import downgrade, normalize_url
    from ..storage.database import open_checked

    if not yes:
        raise fail("a downgrade may drop tables and their data: add --yes to go on")
    with user_errors():
        db = open_checked(database_url, create=False, migrate=False)
        try:
            downgrade(db, revision)
        finally:
            db.dispose()
    console.print(f"Schema of {normalize_url(database_url).split('@')[-1]} is at {revision}.")


@db_app.command("prewarm")
def db_prewarm(
    database_url: DatabaseUrl = None,
    max_mb: Annotated[
        int | None,
        typer.Option(
            "--max-mb",
            min=1,
            help="PostgreSQL: read at most this many MiB (for a server with less memory than the"
            " ledger): indexes and small tables first, then the newest part of the large tables.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Read the tables and indexes the service reads into the OS cache (after a restart: the first
    requests then find them cached). PostgreSQL: the pg_prewarm extension; SQLite: the file."""
    import time

    from ..storage.database import open_checked
    from ..storage.prewarm import prewarm
    from ..storage.urls import sqlite_path

    with user_errors():
        db = open_checked(database_url, create=False)
        try:
            if max_mb is not None and sqlite_path(db.url) is not None:
                raise fail("--max-mb applies to PostgreSQL only: a SQLite file is read whole")
            started = time.perf_counter()
            read = prewarm(db, None if max_mb is None else max_mb * 2**20)
        finally:
            db.dispose()
    total = sum(size for _, size in read)
    took = time.perf_counter() - started
    kinds = "relation" if len(read) == 1 else "relations"
    bound = "" if max_mb is None else f" of at most {max_mb:,} MiB"
    console.print(f"Read {len(read)} {kinds}, {total / 2**20:,.0f} MiB{bound}, in {took:.1f} s.")


@ratings_app.command("rerate")
def ratings_rerate(
    rules_path: Annotated[
        Path | None,
        typer.Argument(help="Rules TOML file (or give --rules FILE).", metavar="[RULES]", show_default=False),
    ] = None,
    rules_file: RulesOption = None,
    label: Annotated[
        str | None, typer.Option(help="Version label (default: the rules' name@version).")
    ] = None,
    activate: Annotated[bool, typer.Option(help="Switch to the new version when done.")] = True,
    database_url: DatabaseUrl = None,
    store_careers: StoreCareers = None,
    progress: ProgressOption = None,
) -> None:
    """Re-rate the whole ledger under new rules (--rules FILE, or FILE) into a new ratings version."""
    try:
        chosen = one_path(("RULES", rules_path), ("--rules", rules_file))
        rules = load_rules(chosen)
        with open_ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
            bar.phase("re-rate", None)
            info = ledger.rerate(rules, label, activate=activate, progress=bar.update)
            if info.active:
                _store_careers(ledger, store_careers, bar)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Version {info.id} ({info.label}) built" + (" and active." if info.active else "."))


@ratings_app.command("activate")
def ratings_activate(
    version_id: Annotated[int, typer.Argument(help="Version id (see `ratings list`).")],
    database_url: DatabaseUrl = None,
    store_careers: StoreCareers = None,
    progress: ProgressOption = None,
) -> None:
    """Make a ratings version the active one (atomically)."""
    try:
        with open_ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
            bar.phase("catch up", None)
            info = ledger.activate(version_id, progress=bar.update)
            _store_careers(ledger, store_careers, bar)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Version {info.id} ({info.label}) is active.")


@ratings_app.command("store-careers")
def ratings_store_careers(
    min_matches: Annotated[
        int | None,
        typer.Option(
            "--min-matches",
            min=1,
            show_default=False,
            help="Players with at least this many matches (default: 1000).",
        ),
    ] = None,
    database_url: DatabaseUrl = None,
    progress: ProgressOption = None,
) -> None:
    """Store the player page summary of the busiest players of the active version (what import,
    rerate, activate and void do at their end; see --store-careers there)."""
    try:
        with open_ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
            stored = _store_careers(ledger, min_matches, bar)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Stored {stored} page summaries.")


@ratings_app.command("list")
def ratings_list(database_url: DatabaseUrl = None) -> None:
    """List ratings versions."""
    table = Table("id", "label", "rules", "active", "created")
    with user_errors(), open_ledger(database_url) as ledger:
        versions = ledger.versions()
    for v in versions:
        table.add_row(str(v.id), v.label, v.rules.label, "yes" if v.active else "", v.created_at)
    console.print(table)
