"""Request ids, the JSON log format and redaction (sedma_elo.service.observability)."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import Api, make_api, single
from sedma_elo.service.keys import KEY_PREFIX
from sedma_elo.service.observability.logging import (
    JsonFormatter,
    RequestIdFilter,
    TextFormatter,
    redact,
    safe_url,
)
from sedma_elo.service.observability.request_id import pick_request_id, request_id_var


@pytest.fixture
def api(tmp_path: Any) -> Iterator[Api]:
    """An app on a fresh SQLite file with the access log on."""
    yield from make_api(f"sqlite:///{tmp_path}/ledger.db", access_log=True)


def _record(msg: str, *args: object, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("sedma_elo.service", logging.INFO, __file__, 1, msg, args or None, None)
    for key, value in extra.items():
        setattr(record, key, value)
    RequestIdFilter().filter(record)
    return record


def test_a_sane_incoming_request_id_is_returned() -> None:
    """An X-Request-ID of letters, digits and ._:- is kept as sent."""
    assert pick_request_id([(b"x-request-id", b"abc.DEF_1:2-3")]) == "abc.DEF_1:2-3"


@pytest.mark.parametrize("bad", [b"", b"has space", b'quote"d', b"x" * 129, "é".encode(), b"a\nb"])
def test_an_odd_incoming_request_id_is_replaced(bad: bytes) -> None:
    """Empty, too long, or with spaces, quotes, newlines or non-ASCII: a fresh 16-hex-digit id instead."""
    rid = pick_request_id([(b"x-request-id", bad)])
    assert rid != bad.decode(errors="replace") and len(rid) == 16 and int(rid, 16) >= 0


def test_every_answer_carries_a_request_id(api: Api) -> None:
    """FastAPI routes and the direct write route both answer with X-Request-ID, echoing a sane one."""
    for response in (
        api.client.get("/v1/leaderboard", headers={"X-Request-ID": "read-1"}),
        api.client.post("/v1/matches", json={}, headers={"X-Request-ID": "write-1"}),
    ):
        assert response.headers["x-request-id"] in {"read-1", "write-1"}
    generated = api.client.get("/livez").headers["x-request-id"]
    assert len(generated) == 16


def test_the_access_log_names_route_status_and_request_id(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    """With access_log on, each request logs one line with its method, path, status and request id."""
    with caplog.at_level(logging.INFO, logger="sedma_elo.service.access"):
        response = api.client.post(
            "/v1/matches",
            json=single("m1"),
            headers={**api.headers(api.write_key), "X-Request-ID": "req-42"},
        )
    assert response.status_code == 201
    lines = [r for r in caplog.records if r.name == "sedma_elo.service.access"]
    assert len(lines) == 1
    line = lines[0]
    assert (line.method, line.path, line.status) == ("POST", "/v1/matches", 201)  # type: ignore[attr-defined]
    assert json.loads(JsonFormatter().format(line))["request_id"] == "req-42"


def test_json_lines_are_objects_with_the_current_request_id() -> None:
    """The JSON formatter writes one object with time, level, logger, message, request id and extras."""
    token = request_id_var.set("rid-7")
    try:
        record = _record("applied %d matches", 3, batch=3)
    finally:
        request_id_var.reset(token)
    data = json.loads(JsonFormatter().format(record))
    assert data["message"] == "applied 3 matches" and data["batch"] == 3
    assert data["request_id"] == "rid-7" and data["level"] == "INFO" and data["time"].endswith("Z")


def test_text_lines_show_the_request_id() -> None:
    """The text formatter puts the request id in brackets before the message."""
    token = request_id_var.set("rid-8")
    try:
        line = TextFormatter().format(_record("hello"))
    finally:
        request_id_var.reset(token)
    assert "[rid-8] hello" in line


@given(st.text(alphabet=st.characters(codec="ascii", categories=["L", "N"]), max_size=40))
def test_redact_hides_every_api_key(around: str) -> None:
    """A generated API key never survives redaction, whatever text surrounds it."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    assert key not in redact(f"{around} {key} {around}")
    assert key not in redact(f"Authorization: Bearer {key}")


def test_redact_hides_passwords_in_urls() -> None:
    """A password in a database URL is masked; the rest of the URL stays readable."""
    line = redact("cannot connect to postgresql+psycopg://app:s3cr3t-pw@db.internal:5432/ratings")
    assert "s3cr3t-pw" not in line and "postgresql+psycopg://app:***@db.internal:5432/ratings" in line


def test_safe_url_masks_the_password() -> None:
    """The start-up line's database URL hides the password and keeps host and database."""
    shown = safe_url("postgresql://app:hunter22@127.0.0.1:5432/ratings")
    assert "hunter22" not in shown and shown.endswith("@127.0.0.1:5432/ratings")
