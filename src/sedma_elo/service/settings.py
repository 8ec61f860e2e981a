"""The service's settings: command-line options and ``SEDMA_ELO_*`` environment variables.

Insecure combinations are refused at start (:meth:`ServiceSettings.check_secure`): an admin bootstrap
key that is short or not an ``sk_`` key, and listening on a non-loopback address with the per-key
rate limit switched off.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ..core.provisional import PROVISIONAL_MATCHES
from ..errors import ValidationError
from ..storage import DEFAULT_DATABASE_URL
from .auth.keys import check_key_strength

#: The connections of a writer process: its writer session's, and one more for its start-up.
WRITER_PROCESS_CONNECTIONS = 2

__all__ = [
    "GAME_WORKER_POOLS",
    "WRITER_PROCESS_CONNECTIONS",
    "GameWorkerPools",
    "PoolSizes",
    "ServiceSettings",
    "cpu_set",
    "is_loopback",
]


@dataclass(frozen=True, slots=True)
class PoolSizes:
    """The database connections one process may open, by pool (see :meth:`ServiceSettings.pool_sizes`).

    ``engine``: the SQLAlchemy engine of writes and most reads (the writer threads hold one each),
    up to ``engine + overflow``; ``writer``: the writer process's engine (no overflow); ``fast``:
    the autocommit engine of hot sync reads (PostgreSQL),
    up to ``fast + overflow``; ``async_reader``: the event loop's own read connections.
    """

    engine: int
    fast: int
    async_reader: int
    overflow: int
    #: The writer process's connections (its session and its start-up), 0 with writer threads.
    writer: int = 0

    @property
    def total(self) -> int:
        """Most connections the process (and its writer process) holds at once (on PostgreSQL)."""
        return self.engine + self.fast + self.async_reader + 2 * self.overflow + self.writer


@dataclass(frozen=True, slots=True)
class GameWorkerPools:
    """The PostgreSQL connections one game worker process opens at most, by pool (no overflow).

    ``engine``: the ledger engine (the writer session and a game's status update); ``fast``: the
    autocommit read engine; ``async_reader``: the ledger's async reader; ``queue``: procrastinate's
    pool (the job's fetch and finish, its LISTEN, the heartbeat). ``service/games/worker.py`` opens
    its pools with these sizes.
    """

    engine: int = 2
    fast: int = 1
    async_reader: int = 1
    queue: int = 3

    @property
    def total(self) -> int:
        """Most connections one game worker holds at once."""
        return self.engine + self.fast + self.async_reader + self.queue


#: The pools of every game worker process (``serve --game-workers``, ``sedma-elo worker``).
GAME_WORKER_POOLS = GameWorkerPools()


class ServiceSettings(BaseSettings):
    """Everything ``sedma-elo serve`` can be told; each field also reads ``SEDMA_ELO_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="SEDMA_ELO_", extra="ignore")

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL, description="SQLAlchemy URL (sqlite:///... or postgresql://...)"
    )
    host: str = Field(default="127.0.0.1", description="address to listen on")
    port: int = Field(default=8000, ge=0, le=65535, description="TCP port")
    admin_key: SecretStr | None = Field(
        default=None,
        description="optional bootstrap admin key (a strong sk_... key: check_key_strength), stored hashed",
    )
    rate_limit: float = Field(default=1000.0, ge=0, description="requests per second per API key (0: none)")
    rate_burst: int = Field(default=2000, ge=1, description="requests a key may send at once")
    max_body_bytes: int = Field(default=16_384, ge=1024, le=10_000_000, description="largest request body")
    max_batch: int = Field(
        default=512, ge=1, le=10_000, description="most matches committed in one group transaction"
    )
    failed_auth_rate: float = Field(
        default=5.0, ge=0, description="unknown-key requests per second per client address (0: no limit)"
    )
    failed_auth_burst: int = Field(
        default=20, ge=1, description="unknown-key requests a client address may send at once (429 beyond)"
    )
    unknown_key_cache_seconds: float = Field(
        default=5.0, ge=0, le=60, description="how long a key found unknown is refused without a lookup"
    )
    key_cache_seconds: float = Field(
        default=2.0, ge=0, le=60, description="how long a checked key is trusted before it is looked up again"
    )
    writer_threads: int = Field(
        default=1,
        ge=1,
        le=32,
        description="group-commit writer threads per process without writer_process (1 measured fastest)",
    )
    writer_process: bool = Field(
        default=True,
        description="apply match writes in a process of their own, not on threads (SQLite file, PostgreSQL)",
    )
    writer_address: str | None = Field(
        default=None,
        description="the Unix socket of a writer process shared by serve --workers N (serve sets it)",
    )
    writer_authkey: SecretStr | None = Field(
        default=None, description="the key of that shared writer process, in hex (serve sets it)"
    )
    # NoDecode: the variable is a Linux CPU list ("0,2-3"), not JSON; the validator parses it once.
    writer_cpus: Annotated[frozenset[int] | None, NoDecode] = Field(
        default=None,
        description="Linux: the CPUs the writer process runs on, as a CPU list such as 0 or 0,2-3"
        " (none: any); beside a PostgreSQL server on the same machine, pin both to the same CPUs",
    )
    wal_checkpoint_seconds: float = Field(
        default=0.05,
        ge=0,
        le=60,
        description="SQLite: seconds between WAL checkpoints on a thread of their own (0: in commits)",
    )
    provisional_matches: int = Field(
        default=PROVISIONAL_MATCHES,
        ge=0,
        le=1_000_000,
        description="matches below which a rating is provisional",
    )
    write_queue: int = Field(
        default=10_000, ge=1, le=1_000_000, description="most matches waiting for the writer (503 beyond)"
    )
    write_timeout: float = Field(
        default=10.0, gt=0, le=600, description="seconds a match write may wait for its commit (503 after)"
    )
    pool_size: int = Field(
        default=16,
        ge=1,
        le=200,
        description="database connections per pool without db_max_connections (up to 5x this per process)",
    )
    db_max_connections: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="most PostgreSQL connections of the whole service, split across its processes",
    )
    reads_in_flight: int | None = Field(
        default=None,
        ge=1,
        le=200,
        description="most reads one API process runs on the database at once (the async reader);"
        " default: its pool",
    )
    processes: int = Field(
        default=1,
        ge=1,
        le=64,
        description="API processes sharing db_max_connections (serve --workers sets it)",
    )
    game_workers: int = Field(
        default=1,
        ge=0,
        le=64,
        description="game analysis processes `serve` starts (0: none; run `sedma-elo worker` elsewhere)",
    )
    game_lease: float = Field(
        default=60.0, gt=0, le=3600, description="seconds a worker holds a game without renewing its claim"
    )
    read_cache_size: int = Field(
        default=50_000,
        ge=0,
        le=10_000_000,
        description="leaderboard and player answers kept until the ledger changes (0: no cache)",
    )
    read_cache_seconds: float = Field(
        default=0.25,
        ge=0,
        le=60,
        description="longest a change committed by another process goes unseen by the read cache",
    )
    access_log: bool = Field(default=False, description="log one line per request")
    log_format: Literal["text", "json"] = Field(default="text", description="text lines or JSON objects")
    metrics: bool = Field(default=True, description="count and time requests for GET /metrics")
    webhooks: bool = Field(default=True, description="deliver the change feed to webhook subscriptions")
    webhook_poll: float = Field(
        default=0.5, gt=0, le=60, description="seconds between looks for webhook work"
    )
    webhook_timeout: float = Field(default=10.0, gt=0, le=120, description="seconds per webhook request")
    webhook_retry_base: float = Field(
        default=1.0, gt=0, le=3600, description="first retry delay of a failed delivery (doubles each time)"
    )
    webhook_lease: float = Field(
        default=60.0, gt=0, le=3600, description="seconds a process keeps a subscription without news"
    )
    webhook_retry_max: float = Field(default=600.0, gt=0, le=86_400, description="longest retry delay")

    @field_validator("writer_cpus", mode="before")
    @classmethod
    def _parse_cpus(cls, value: object) -> object:
        """A CPU list's text (the variable, or a string given in code) becomes its set of CPUs."""
        return cpu_set(value) if isinstance(value, str) else value

    def pool_sizes(self) -> PoolSizes:
        """Each pool's size in one process.

        Without :attr:`db_max_connections`: :attr:`pool_size` per pool, with as many again as
        overflow on both engines (5 x ``pool_size`` per process at most). With it, the
        :attr:`game_workers` that ``serve`` starts take their fixed share first
        (``game_workers x GAME_WORKER_POOLS.total``), and each of the :attr:`processes` gets
        ``per = (db_max_connections - that share) // processes``, split without overflow:
        ``engine = max(writer_threads + 2, per // 3)``, ``fast = (per - engine) // 2``,
        ``async_reader = per - engine - fast``, where a writer process's
        ``WRITER_PROCESS_CONNECTIONS`` come out of ``engine``; so the API processes and the game workers never
        hold more than ``db_max_connections`` in all. A request that finds its pool busy waits
        for a connection. (A ``sedma-elo worker`` run elsewhere holds ``GAME_WORKER_POOLS.total``
        of its own: leave room for it.)

        Raises:
            ValidationError: ``per`` is below ``writer_threads + 4`` (field ``db_max_connections``).
        """
        writer = WRITER_PROCESS_CONNECTIONS if self.writer_process else 0
        if self.db_max_connections is None:
            size = self.pool_size
            return PoolSizes(engine=size, fast=size, async_reader=size, overflow=size, writer=writer)
        workers_share = self.game_workers * GAME_WORKER_POOLS.total
        per = (self.db_max_connections - workers_share) // self.processes
        least = self.writer_threads + 4
        if per < least:
            raise ValidationError(
                "db_max_connections",
                f"must allow at least {least} connections per process ({self.processes} processes,"
                f" {self.writer_threads} writer threads) after the {workers_share} of"
                f" {self.game_workers} game workers, got {max(per, 0)} each",
            )
        engine = max(self.writer_threads + 2, per // 3)
        fast = (per - engine) // 2
        async_reader = per - engine - fast
        # The writer process's connections come out of the engine's share, which kept room for
        # writer threads that the process does not run.
        return PoolSizes(
            engine=engine - writer, fast=fast, async_reader=async_reader, overflow=0, writer=writer
        )

    def reader_connections(self) -> int:
        """The async reader's connections in one API process: its pool (:meth:`pool_sizes`), or
        :attr:`reads_in_flight` if that is set and smaller.

        Fewer reads at once than the pool pay when the database is CPU-bound: on a 2-core machine
        with PostgreSQL on it and the ledger in memory, 16 at once gave a player's rank with
        neighbours a p99 of 75-84 ms, 4 gave 15.6-37.6 ms, the other reads unmoved. When reads
        wait on the disk, more at once keep more reads in flight there: in one pair of runs on a
        slow disk, 4 gave 1.34 s and 16 gave 79 ms (docs/service-measurements.md, "The reads at
        10 M again"). So the default stays the pool; set it near twice the database's cores when
        its ledger fits in its memory.
        """
        pool = self.pool_sizes().async_reader
        return pool if self.reads_in_flight is None else min(pool, self.reads_in_flight)

    def check_secure(self) -> None:
        """Refuse insecure settings.

        Raises:
            ValidationError: a weak ``admin_key``, or a public ``host`` with ``rate_limit`` 0.
        """
        if self.admin_key is not None:
            check_key_strength("admin_key", self.admin_key.get_secret_value())
        if self.rate_limit == 0 and not is_loopback(self.host):
            raise ValidationError("rate_limit", "must be > 0 when listening on a non-loopback address")


def cpu_set(text: str) -> frozenset[int]:
    """The CPUs of a Linux CPU list (``0``, ``0,2-3``), each one this machine has.

    Raises:
        ValueError: not such a list, a range that runs down, a CPU beyond ``os.cpu_count()``, or a
            system without ``os.sched_setaffinity`` (only Linux has it).
    """
    if not hasattr(os, "sched_setaffinity"):
        raise ValueError("CPU affinity needs Linux (os.sched_setaffinity)")
    count = os.cpu_count() or 1
    cpus: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not _number(first) or (dash and not _number(last)):
            raise ValueError(f"{text!r} is not a CPU list such as 0 or 0,2-3")
        low, high = int(first), int(last) if dash else int(first)
        if low > high:
            raise ValueError(f"{part.strip()!r}: a range runs from the lower CPU up")
        if high >= count:
            raise ValueError(f"CPU {high} is not on this machine (CPUs 0-{count - 1})")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)


def _number(text: str) -> bool:
    return text.isascii() and text.isdecimal()


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address to listen on) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
