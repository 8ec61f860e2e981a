"""Run ``sedma-elo serve`` in a subprocess on a listening socket this process bound to port 0.

The socket is bound (port 0: the kernel picks a free port) and listening before the server starts,
then handed to the child (``pass_fds``), as socket activation does: no other process can take the
port between choosing and binding it. The child runs the real ``serve`` command; only its final
``uvicorn.run(app, host=..., port=...)`` is replaced by serving the inherited socket. Connections
made before the server accepts wait in the socket's backlog, so readiness is a blocking request,
not a polling loop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

SEDMA_ELO = str(Path(sys.executable).with_name("sedma-elo"))

# argv: fd, then the serve command's arguments.
_BOOTSTRAP = """
import socket, sys
import uvicorn
sock = socket.socket(fileno=int(sys.argv[1]))
def run(app, host=None, port=None, **options):
    uvicorn.Server(uvicorn.Config(app, **options)).run(sockets=[sock])
uvicorn.run = run
from sedma_elo.cli import app
app(sys.argv[2:], prog_name="sedma-elo")
"""


class Server:
    """A running ``sedma-elo serve`` process on 127.0.0.1 (``port``: the one it serves)."""

    def __init__(self, db_url: str, *serve_args: str, **env: str) -> None:
        self.db_url = db_url
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        self.port: int = listener.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        # No game-analysis processes unless a test asks (`--game-workers N`): each is a fresh
        # interpreter, slow to start on a loaded machine and of no use to a test of matches.
        full_env = {
            **{k: v for k, v in os.environ.items() if k != "SEDMA_ELO_WRITER_PROCESS"},  # serve's own
            "SEDMA_ELO_RATE_LIMIT": "100000",
            "SEDMA_ELO_RATE_BURST": "100000",
            "SEDMA_ELO_GAME_WORKERS": "0",
            **env,
        }
        fd = listener.fileno()
        args = ["serve", "--database-url", db_url, "--port", str(self.port), *serve_args]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP, str(fd), *args],
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=[fd],
            start_new_session=True,  # its own process group: kill9 takes its worker processes too
        )
        listener.close()  # the child holds the socket now: once it dies, connections are refused
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    _, err = self.stop()
                    raise RuntimeError(f"server did not start: {err}") from None

    def kill9(self) -> None:
        """SIGKILL to the server and every process it started (as a container stop does): no shutdown hook.

        A worker left running would hold the server's output pipes open (and the database).
        """
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.communicate(timeout=10)

    def stop(self) -> tuple[str, str]:
        """SIGTERM (SIGKILL after 15 s); return what the server wrote to stdout and to stderr.

        Both are read only here: a test that makes the server write more than a pipe holds (64 KiB)
        must read them while it runs.
        """
        out = err = b""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                out, err = self.proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                out, err = self.proc.communicate(timeout=5)
        else:
            out, err = self.proc.communicate()
        return out.decode(errors="replace"), err.decode(errors="replace")
