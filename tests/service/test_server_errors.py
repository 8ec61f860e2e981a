"""An unexpected error answers a JSON 500 carrying the request id, and logs it with that id."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Api, make_api, single
from sedma_elo.service.api.responses import ServerError
from sedma_elo.service.observability.logging import LOGGER, RequestIdFilter
from sedma_elo.service.writer import GroupWriter


@pytest.fixture
def failing(tmp_path: Any) -> Iterator[Api]:
    """The app on SQLite with one more route, ``GET /v1/boom``, that always raises."""
    for api in make_api(f"sqlite:///{tmp_path}/ledger.db"):

        def boom() -> None:
            raise RuntimeError("the disk caught fire sk_live_0123456789")

        api.client.app.add_api_route("/v1/boom", boom)  # type: ignore[attr-defined]
        yield api


def test_a_failing_route_answers_json_with_the_request_id(failing: Api) -> None:
    """The 500 body is a ServerError whose request_id equals the X-Request-ID header."""
    r = failing.client.get("/v1/boom")
    assert r.status_code == 500
    assert r.headers["content-type"] == "application/json"
    body = ServerError.model_validate_json(r.content)
    assert body.request_id == r.headers["x-request-id"]
    assert "fire" not in r.text  # the error's own text stays in the log


def test_the_500_carries_the_id_the_client_sent(failing: Api) -> None:
    """A client's own X-Request-ID comes back in the 500 body."""
    r = failing.client.get("/v1/boom", headers={"X-Request-ID": "trace-42"})
    assert (r.status_code, r.json()["request_id"]) == (500, "trace-42")


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_the_error_is_logged_with_its_traceback_and_request_id(failing: Api) -> None:
    """The log has the traceback, stamped with the id the client can quote."""
    handler = Records()
    handler.addFilter(RequestIdFilter())
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    try:
        r = failing.client.get("/v1/boom", headers={"X-Request-ID": "trace-43"})
    finally:
        logger.removeHandler(handler)
    (record,) = handler.records
    assert r.json()["request_id"] == record.request_id == "trace-43"
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)
    assert "GET /v1/boom" in record.getMessage()


def test_a_failing_write_on_the_direct_route_answers_the_same(
    failing: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POST /v1/matches (served before FastAPI's stack) answers a ServerError too when the writer fails."""

    async def broken(self: GroupWriter, sub: Any) -> Any:
        raise RuntimeError("writer exploded")

    monkeypatch.setattr(GroupWriter, "submit", broken)
    r = failing.post(single("m-1"))
    assert r.status_code == 500
    assert ServerError.model_validate_json(r.content).request_id == r.headers["x-request-id"]


def test_a_failing_route_is_counted_as_a_500(failing: Api) -> None:
    """The metrics see the 500 under the route's template."""
    failing.client.get("/v1/boom")
    metrics = failing.client.get("/metrics").text
    assert 'route="/v1/boom",status="500"' in metrics
