"""A webhook receiver in a subprocess on a socket the test bound (127.0.0.1, port 0), and its record.

The child appends one JSON line per request it receives (headers of interest and the raw body) to a
file, with one ``write`` on an ``O_APPEND`` descriptor *before* it answers, so what it recorded
survives a SIGKILL. ``die_at=n`` makes it SIGKILL itself right after recording its n-th request
(before answering): the sender sees a cut connection and must deliver that event again;
``fail_first=n`` answers 500 to the first n requests; ``delay`` seconds pass before each answer
(a slow receiver).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_CHILD = r"""
import base64, http.server, json, os, signal, socket, sys, time
sock = socket.socket(fileno=int(sys.argv[1]))
out = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
die_at = int(sys.argv[3])
fail_first = int(sys.argv[4])
delay = float(sys.argv[5])
seen = 0

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        keep = ("X-Sedma-Sequence", "X-Sedma-Event", "X-Sedma-Timestamp", "X-Sedma-Signature")
        line = {"path": self.path, "headers": {k: self.headers.get(k) for k in keep},
                "body": base64.b64encode(body).decode()}
        os.write(out, (json.dumps(line) + "\n").encode())
        seen += 1
        if seen == die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(delay)
        self.send_response(500 if seen <= fail_first else 204)
        self.end_headers()

    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
server.socket = sock
server.serve_forever()
"""


class Receiver:
    """A receiver child on ``port`` (0: a free one), recording to ``path``, dying at request ``die_at``."""

    def __init__(
        self, path: Path, port: int = 0, die_at: int = 0, fail_first: int = 0, delay: float = 0.0
    ) -> None:
        self.path = path
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(16)
        self.port: int = listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        fd = listener.fileno()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(fd), str(path), str(die_at), str(fail_first), str(delay)],
            pass_fds=[fd],
        )
        listener.close()  # the child holds it: once the child dies, connections are refused

    def wait_dead(self, timeout: float) -> None:
        """Wait for the child to have died (``die_at``)."""
        self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        """SIGKILL the child if it still runs."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def records(path: Path) -> list[dict[str, Any]]:
    """Every request recorded so far, in arrival order (a line the child is still writing is left for
    the next read: a reader may see an append in part, CI caught one cut in the middle of a string)."""
    if not path.exists():
        return []
    *complete, _partial = path.read_text().split("\n")
    return [json.loads(line) for line in complete if line]


def wait_for(path: Path, done: Any, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Poll the record until ``done(records)`` is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = records(path)
        if done(got):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout} s with {len(got)} requests recorded")
        time.sleep(0.02)
