"""How benchmarks/_wrk.py names the answers that were not 2xx: from the service's request counter."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType

import pytest
from prometheus_client import CollectorRegistry, Counter, generate_latest

from .script import load_script


@pytest.fixture(scope="module")
def wrk() -> ModuleType:
    """The helper module, loaded from its file."""
    return load_script("_wrk")


class _Service:
    """An HTTP server on 127.0.0.1 whose ``GET /metrics`` shows a counter like the service's."""

    def __init__(self, body: bytes | None = None) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "sedma_elo_http_requests", "answers", ["method", "route", "status"], registry=self.registry
        )
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                text = body if body is not None else generate_latest(service.registry)
                self.send_response(200)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def count(self, status: str, n: int, route: str = "/v1/matches") -> None:
        self.requests.labels("POST", route, status).inc(n)


@pytest.fixture
def service() -> Iterator[_Service]:
    """A counting server, running."""
    s = _Service()
    s.thread.start()
    yield s
    s.server.shutdown()
    s.server.server_close()


def test_refused_names_the_new_answers_that_were_not_2xx(wrk: ModuleType, service: _Service) -> None:
    """Only the answers counted between the two scrapes appear, 2xx left out, most first."""
    service.count("201", 100)
    service.count("429", 3)
    before = wrk.status_counts(service.base)
    service.count("201", 900)
    service.count("429", 17)
    service.count("503", 2)
    service.count("401", 1, route="/v1/leaderboard")
    after = wrk.status_counts(service.base)
    expected = "429 POST /v1/matches: 17, 503 POST /v1/matches: 2, 401 POST /v1/leaderboard: 1"
    assert wrk.refused(before, after) == expected


def test_status_counts_is_none_without_prometheus_text(wrk: ModuleType) -> None:
    """An endpoint answering JSON (the bare-ASGI ceiling's app) gives no counts, and no claim."""
    s = _Service(body=b'{"match_id": null}')
    s.thread.start()
    try:
        assert wrk.status_counts(s.base) is None
        assert wrk.refused(None, None) == "not counted"
    finally:
        s.server.shutdown()
        s.server.server_close()


def test_status_counts_is_none_when_nothing_listens(wrk: ModuleType) -> None:
    """A closed port gives no counts rather than an error."""
    s = _Service()  # bound, never served: connect then fails to get an answer
    base = s.base
    s.server.server_close()
    assert wrk.status_counts(base) is None
