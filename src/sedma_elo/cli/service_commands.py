"""Service commands: serve, keys, import, export, verify, void, db and ratings."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..core.rules import load_rules
from ..errors import SedmaEloError
from . import app
from .errors import fail, user_errors
from .options import OutOption, ProgressOption, RulesOption, SkipBad, one_path
from .progress import ProgressBar, show_progress

if TYPE_CHECKING:
    from ..batch.history import HistoryArrays, LinedMatches
    from ..service.ledger import Ledger
    from ..service.settings import ServiceSettings
    from ..service.writer_process import SharedWriter

console = Console()
err_console = Console(stderr=True)

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="SEDMA_ELO_DATABASE_URL",
        help="SQLAlchemy URL: sqlite:///path.db (default ./sedma-elo.db) or postgresql://user@host/db.",
        show_default=False,
    ),
]

keys_app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
ratings_app = typer.Typer(
    help="Ratings versions: re-rate under new rules, list, activate.", no_args_is_help=True
)
app.add_typer(keys_app, name="keys")
app.add_typer(db_app, name="db")
app.add_typer(ratings_app, name="ratings")


@contextmanager
def _ledger(url: str | None, *, create: bool = False) -> Iterator[Ledger]:
    """The ledger on ``url`` (schema upgraded, first version created), closed afterwards.

    Only commands that set a ledger up pass ``create``: the others refuse a SQLite file that does
    not exist (a mistyped path must not give an empty ledger and "0 matches: all equal").

    Raises:
        ValidationError: the URL is unusable. DatabaseError: the database does not exist (or,
            with ``create``, cannot be created) or cannot be reached.
    """
    from sqlalchemy.exc import DBAPIError

    from ..service.ledger import Ledger
    from ..storage.database import database_error, open_checked

    ledger = Ledger(open_checked(url, create=create))
    try:
        try:
            ledger.ensure_version()
        except DBAPIError as exc:
            raise database_error(exc, url) from None
        yield ledger
    finally:
        ledger.db.dispose()


def _create_database(url: str | None) -> None:
    """Create the database (a SQLite file) and its schema if they do not exist yet."""
    from ..storage.database import open_checked

    open_checked(url, create=True).dispose()


class Scope(StrEnum):
    """What a key may do."""

    games = "games"
    write = "write"
    admin = "admin"


# ---------------------------------------------------------------------------- serve
@app.command()
def serve(
    database_url: DatabaseUrl = None,
    host: Annotated[str, typer.Option(help="Address to listen on.", envvar="SEDMA_ELO_HOST")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", envvar="SEDMA_ELO_PORT")] = 8000,
    workers: Annotated[int, typer.Option(help="API processes sharing the database.", min=1, max=64)] = 1,
    demo: Annotated[
        bool,
        typer.Option("--demo", help="Import the demo history, create a write key and print a curl example."),
    ] = False,
    create: Annotated[
        bool,
        typer.Option("--create", help="Create the SQLite database file if it does not exist (--demo does)."),
    ] = False,
    access_log: Annotated[bool, typer.Option("--access-log", help="Log every request.")] = False,
    log_format: Annotated[
        str, typer.Option("--log-format", help="text or json (one JSON object a line, with request ids).")
    ] = "text",
    game_workers: Annotated[
        int,
        typer.Option(
            help="Game analysis processes to start (0: none; run `sedma-elo worker` instead).",
            envvar="SEDMA_ELO_GAME_WORKERS",
            min=0,
            max=64,
        ),
    ] = 1,
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json, docs at /docs) until interrupted.

    Posted game records are analysed by ``--game-workers`` processes started beside the API.
    """
    from ..service.demo import refuse_public_demo_keys
    from ..service.observability.startup import prepare_serve
    from ..service.settings import ServiceSettings

    if database_url:
        os.environ["SEDMA_ELO_DATABASE_URL"] = database_url
    os.environ["SEDMA_ELO_HOST"] = host
    os.environ["SEDMA_ELO_PORT"] = str(port)
    os.environ.update(SEDMA_ELO_ACCESS_LOG=str(access_log), SEDMA_ELO_LOG_FORMAT=log_format)
    os.environ["SEDMA_ELO_PROCESSES"] = str(workers)  # the worker processes split db_max_connections
    os.environ["SEDMA_ELO_GAME_WORKERS"] = str(game_workers)  # ... after the game workers' share
    try:
        settings = ServiceSettings()
        settings.check_secure()
        settings.pool_sizes()  # a connection budget too small for the processes is refused here
    except (SedmaEloError, ValueError) as exc:
        raise fail(exc) from exc
    if create or demo:  # else a SQLite file that does not exist is refused just below
        _create_database(settings.database_url)
    # Migrate and create the first version once, before any worker process starts.
    with _ledger(settings.database_url) as ledger:
        rules = next(f"{v.rules.label} (ratings version {v.id})" for v in ledger.versions() if v.active)
    try:
        if demo:
            _prepare_demo(settings.database_url, host, port)
        with _ledger(settings.database_url) as ledger:
            refuse_public_demo_keys(ledger.db, host)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    log_config = prepare_serve(settings, processes=workers, rules=rules)
    from ..service.games.worker import start_processes, stop_processes

    analysts = start_processes(settings.database_url, game_workers, settings.game_lease)
    shared = _shared_writer(settings, workers)
    try:
        _run_uvicorn(settings, workers, log_config)
    finally:
        if shared is not None:
            shared.stop()
        stop_processes(analysts)


def _shared_writer(settings: ServiceSettings, workers: int) -> SharedWriter | None:
    """With several API processes: one writer process for all, started, its address in the
    environment the workers start with (each would otherwise start one of its own, and their
    batches would contend for the same locks)."""
    from ..service.app import writer_config
    from ..service.writer_process import SharedWriter

    config = writer_config(settings)
    if workers == 1 or config is None:
        return None
    shared = SharedWriter(config)
    try:
        shared.start()
    except SedmaEloError as exc:
        shared.stop()
        raise fail(exc) from exc
    os.environ.update(shared.environment())
    return shared


#: Seconds uvicorn's supervisor waits for a worker's answer before it kills it as hung.
WORKER_HEALTHCHECK_SECONDS = 60


def _run_uvicorn(settings: ServiceSettings, workers: int, log_config: dict[str, Any]) -> None:
    """Serve until interrupted: the app in this process (one worker) or ``workers`` processes."""
    import uvicorn

    host, port = settings.host, settings.port
    # The access log is the service's own (with request ids); uvicorn's stays off.
    if workers == 1:
        from ..service.app import create_app
        from ..service.runtime import tune_process

        tune_process(freeze=True)  # the workers' entry point, app_from_env, does the same in each
        uvicorn.run(
            create_app(settings),
            host=host,
            port=port,
            access_log=False,
            log_level="warning",
            log_config=log_config,
        )
    else:
        uvicorn.run(
            "sedma_elo.service.app:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            # uvicorn kills a worker that does not answer its supervisor's ping within this many
            # seconds (default 5) and starts another: on a loaded machine (load average 15-20, the
            # game workers importing beside them) workers still starting were killed over and over,
            # and `serve --workers 2` never answered (a restart loop logged at INFO, below our level).
            timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
            access_log=False,
            log_level="warning",
            log_config=log_config,
        )


def _prepare_demo(url: str | None, host: str, port: int) -> None:
    from ..batch.history import read_matches
    from ..service.demo import bundled_sample, demo_keys, demo_matches

    _create_database(url)
    with _ledger(url) as ledger:
        keys = demo_keys(ledger.db, host)
        if ledger.ledger_size() == 0:
            sample = bundled_sample()
            matches = read_matches(sample)[0] if sample is not None else demo_matches()
            report = ledger.import_matches(matches)
            console.print(f"Imported {report.created} demo matches.")
    base = f"http://{host}:{port}"
    write = keys.get("write", "sk_...")
    console.print(f"Serving the sedma-elo rating service at {base} (API docs: {base}/docs)")
    console.print("Example:", highlight=False)
    console.print(
        f"  curl -s -X POST {base}/v1/matches -H 'Authorization: Bearer {write}' "
        "-H 'Content-Type: application/json' "
        """-d '{"match_id": "m-1", "played_at": "2026-11-29T12:00:00Z", "player_a": "alice", """
        """"player_b": "bob", "winner": "a", "stats": {"a": {"won_by_16": 1}, "b": {"bad_moves": 2}}}'""",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"  curl -s {base}/v1/leaderboard?limit=5", highlight=False, soft_wrap=True)
    if "admin" in keys:
        console.print(
            f"  curl -s {base}/v1/admin/keys -H 'Authorization: Bearer {keys['admin']}'", highlight=False
        )
    console.print(
        "DEMO keys (public, the same every run; refused when serving on a non-loopback address):",
        highlight=False,
    )
    for scope in ("admin", "write"):
        if scope in keys:
            console.print(f"  {scope} key: {keys[scope]}", highlight=False)
        else:
            console.print(f"  {scope} key: revoked in this database (create one: sedma-elo keys create)")
    console.print("Write key:", highlight=False)
    print(write, flush=True)


# ---------------------------------------------------------------------------- keys
@keys_app.command("create")
def keys_create(
    scope: Annotated[
        Scope,
        typer.Option(help="games (post game records only), write (post matches) or admin (everything)."),
    ] = Scope.write,
    label: Annotated[str, typer.Option(help="A note to recognise the key by.")] = "",
    database_url: DatabaseUrl = None,
) -> None:
    """Create a random API key; its secret is printed once, as the last line (only a hash is stored)."""
    from ..service.keys import create_key

    try:
        with _ledger(database_url, create=True) as ledger:
            key, info = create_key(ledger.db, scope.value, label)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Created key {info.id} ({info.scope}, prefix {info.prefix}). Keep it secret:")
    print(key, flush=True)


@keys_app.command("list")
def keys_list(database_url: DatabaseUrl = None) -> None:
    """List keys (id, prefix, scope, label, created, revoked); never their secrets."""
    from ..service.keys import list_keys

    table = Table("id", "prefix", "scope", "label", "created", "revoked")
    with user_errors(), _ledger(database_url) as ledger:
        keys = list_keys(ledger.db)
    for k in keys:
        table.add_row(str(k.id), k.prefix, k.scope, k.label, k.created_at, k.revoked_at or "")
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[int, typer.Argument(help="The key's id (see `keys list`).")],
    database_url: DatabaseUrl = None,
) -> None:
    """Revoke a key: it stops working at once here, within key_cache_seconds in running servers."""
    from ..service.keys import revoke_key

    try:
        with _ledger(database_url) as ledger:
            info = revoke_key(ledger.db, key_id)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Revoked key {info.id} ({info.prefix}).")


# ---------------------------------------------------------------------------- import / export
@app.command("import")
def import_history(
    path: Annotated[
        Path,
        typer.Argument(help="Match history: CSV or JSON Lines, optionally .gz.", exists=True, dir_okay=False),
    ],
    database_url: DatabaseUrl = None,
    skip_bad: SkipBad = False,
    progress: ProgressOption = None,
) -> None:
    """Apply a history file to the ledger in one transaction: the rows POST /v1/matches would store.

    A match already in the ledger with the same body counts as repeated; one with a different body
    refuses the whole file (exit 2, the line named, nothing stored) unless --skip-bad leaves it out.
    """
    from ..batch.history import iter_lined
    from .progress import ProgressBar, show_progress

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

        with user_errors(), _ledger(database_url, create=True) as ledger:
            report = ledger.import_history(chunks(), skip_bad=skip_bad, progress=bar)
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
        with _ledger(database_url) as ledger:
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
    with user_errors(), _ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
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
    progress: ProgressOption = None,
) -> None:
    """Void a match: its effects and everything after it are recomputed from the ledger."""
    from ..core.ids import check_id

    try:
        match_id = check_id("match_id", match_id)
        with _ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
            bar.phase("rebuild", None)
            ledger.void(match_id, reason, progress=bar.update)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Voided {match_id}.")


# ---------------------------------------------------------------------------- db / ratings
@db_app.command("upgrade")
def db_upgrade(database_url: DatabaseUrl = None) -> None:
    """Create or upgrade the schema to the newest migration (safe to repeat)."""
    from ..storage import normalize_url

    _create_database(database_url)
    console.print(f"Schema of {normalize_url(database_url).split('@')[-1]} is up to date.")


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
    progress: ProgressOption = None,
) -> None:
    """Re-rate the whole ledger under new rules (--rules FILE, or FILE) into a new ratings version."""
    try:
        chosen = one_path(("RULES", rules_path), ("--rules", rules_file))
        rules = load_rules(chosen)
        with _ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
            bar.phase("re-rate", None)
            info = ledger.rerate(rules, label, activate=activate, progress=bar.update)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Version {info.id} ({info.label}) built" + (" and active." if info.active else "."))


@ratings_app.command("activate")
def ratings_activate(
    version_id: Annotated[int, typer.Argument(help="Version id (see `ratings list`).")],
    database_url: DatabaseUrl = None,
    progress: ProgressOption = None,
) -> None:
    """Make a ratings version the active one (atomically)."""
    try:
        with _ledger(database_url) as ledger, ProgressBar(show_progress(progress)) as bar:
            bar.phase("catch up", None)
            info = ledger.activate(version_id, progress=bar.update)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Version {info.id} ({info.label}) is active.")


@ratings_app.command("list")
def ratings_list(database_url: DatabaseUrl = None) -> None:
    """List ratings versions."""
    table = Table("id", "label", "rules", "active", "created")
    with user_errors(), _ledger(database_url) as ledger:
        versions = ledger.versions()
    for v in versions:
        table.add_row(str(v.id), v.label, v.rules.label, "yes" if v.active else "", v.created_at)
    console.print(table)
