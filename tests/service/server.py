"""Start ``sedma-elo serve`` in a subprocess on a free 127.0.0.1 port and wait until it answers."""

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """A running ``sedma-elo serve`` process."""

    def __init__(self, db_url: str, port: int | None = None, **env: str) -> None:
        self.db_url = db_url
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        full_env = {**os.environ, "SEDMA_ELO_RATE_LIMIT": "100000", "SEDMA_ELO_RATE_BURST": "100000", **env}
        self.proc = subprocess.Popen(
            [SEDMA_ELO, "serve", "--database-url", db_url, "--port", str(self.port)],
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    self.stop()
                    raise RuntimeError(f"server did not start: {err}") from None
                time.sleep(0.1)

    def kill9(self) -> None:
        """SIGKILL: no shutdown hook runs."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        if self.proc.stderr:
            self.proc.stderr.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stderr:
            self.proc.stderr.close()
