"""How benchmarks/bench_cpu_split.py tells the service's processes apart: by the listening socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

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
