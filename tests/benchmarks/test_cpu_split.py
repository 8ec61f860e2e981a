"""How benchmarks/bench_cpu_split.py tells the service's processes apart: by the listening socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from types import ModuleType

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from .script import load_script


@pytest.fixture(scope="module")
def split() -> ModuleType:
    """The script, loaded from its file."""
    return load_script("bench_cpu_split")


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    """A TCP socket of this process listening on a free port of 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock


def _inode(sock: socket.socket) -> str:
    return str(os.fstat(sock.fileno()).st_ino)


def test_a_listening_socket_is_found_by_its_port(split: ModuleType, listening: socket.socket) -> None:
    """The socket listening on the port is listed, and this process is seen to hold it."""
    port = listening.getsockname()[1]
    assert split.tcp_inodes(port, split.LISTEN) == {_inode(listening)}
    assert _inode(listening) in split.socket_inodes(os.getpid())


def test_only_the_holder_of_the_listening_socket_is_an_api_process(
    split: ModuleType, listening: socket.socket
) -> None:
    """A child that does not hold the listening socket is counted as the writer process."""
    port = listening.getsockname()[1]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], close_fds=True)
    try:
        found = split.roles(os.getpid(), port)
    finally:
        child.kill()
        child.wait()
    assert found[os.getpid()] == "API process"
    assert found[child.pid] == "writer process"


def test_connections_are_counted_for_the_process_that_accepted_them(
    split: ModuleType, listening: socket.socket
) -> None:
    """Each accepted connection to the port counts once, for the process holding it."""
    port = listening.getsockname()[1]
    assert split.connections_by_pid(port, {os.getpid()}) == {os.getpid(): 0}
    with socket.create_connection(("127.0.0.1", port)):
        accepted, _ = listening.accept()
        with accepted:
            assert split.connections_by_pid(port, {os.getpid()}) == {os.getpid(): 1}


@pytest.mark.skipif(
    not os.path.exists("/proc/self/schedstat"), reason="the kernel keeps no scheduler statistics"
)
def test_processes_sharing_one_cpu_are_seen_waiting_for_it(split: ModuleType) -> None:
    """Four busy processes held to one CPU each wait on its run queue about three quarters of the time
    (and run a quarter: the CPU time, the other field of ``schedstat``, would stay under the bound)."""
    busy = (
        "import os, time; os.sched_setaffinity(0, {0}); end = time.monotonic() + 3\n"
        "while time.monotonic() < end: pass"
    )
    children = [subprocess.Popen([sys.executable, "-c", busy]) for _ in range(4)]
    try:
        before = split.run_queue_waits()
        time.sleep(0.8)
        after = split.run_queue_waits()
    finally:
        for child in children:
            child.kill()
            child.wait()
    for child in children:
        assert after[child.pid] - before[child.pid] > 400_000_000  # ns: about 0.6 of the 0.8 s


def test_slow_writes_are_counted_from_the_request_duration_histogram(split: ModuleType) -> None:
    """Writes over 50 ms are the POSTs to the write route outside the histogram's 0.05 bucket."""
    registry = CollectorRegistry()
    seconds = Histogram(
        "sedma_elo_http_request_duration_seconds",
        "as the service declares it",
        ["method", "route", "status"],
        buckets=(0.01, 0.05, 0.1),
        registry=registry,
    )
    for took in (0.004, 0.03, 0.05, 0.07, 0.2):
        seconds.labels("POST", "/v1/matches", "201").observe(took)
    seconds.labels("POST", "/v1/matches", "409").observe(0.09)
    seconds.labels("GET", "/v1/matches", "200").observe(0.3)  # a read of the same path: not a write
    seconds.labels("POST", "/v1/keys", "201").observe(0.3)  # another route
    text = generate_latest(registry).decode()
    assert split.slow_writes(text) == (6, 3)  # 0.07, 0.2 and 0.09 are over 0.05; 0.05 is within
