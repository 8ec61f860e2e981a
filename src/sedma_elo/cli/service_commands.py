"""Service commands: serve (and the demo it can prepare) and API keys."""

from __future__ import annotations

import os
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..errors import SedmaEloError
from . import app
from .errors import fail, user_errors
from .ledgers import create_database, open_ledger
from .options import DatabaseUrl

if TYPE_CHECKING:
    from ..service.settings import ServiceSettings
    from ..service.writer_process import SharedWriter

console = Console()

keys_app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


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
        create_database(settings.database_url)
    # Migrate and create the first version once, before any worker process starts.
    with open_ledger(settings.database_url) as ledger:
        rules = next(f"{v.rules.label} (ratings version {v.id})" for v in ledger.versions() if v.active)
    try:
        if demo:
            _prepare_demo(settings.database_url, host, port)
        with open_ledger(settings.database_url) as ledger:
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

    create_database(url)
    with open_ledger(url) as ledger:
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
        with open_ledger(database_url, create=True) as ledger:
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
    with user_errors(), open_ledger(database_url) as ledger:
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
        with open_ledger(database_url) as ledger:
            info = revoke_key(ledger.db, key_id)
    except SedmaEloError as exc:
        raise fail(exc) from exc
    console.print(f"Revoked key {info.id} ({info.prefix}).")
