"""``sedma-elo serve --access-log --log-format json`` end to end: start-up line, access lines, no secrets."""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest
from server import Server


def _call(base: str, path: str, key: str | None = None, body: bytes | None = None) -> tuple[int, str]:
    request = urllib.request.Request(base + path, data=body, method="POST" if body is not None else "GET")
    if key is not None:
        request.add_header("Authorization", f"Bearer {key}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["X-Request-ID"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["X-Request-ID"]


@pytest.mark.postgres
def test_json_logs_have_request_ids_and_no_keys_or_passwords(new_pg_database: Callable[[], str]) -> None:
    """Every stderr line is JSON; access lines match the X-Request-ID answers; no secret is ever written."""
    password = "pw-" + secrets.token_hex(8)  # the server's PostgreSQL trusts 127.0.0.1 and ignores it
    url = new_pg_database().replace("postgres@", f"postgres:{password}@")
    admin = "sk_" + secrets.token_urlsafe(32)
    wrong = "sk_" + secrets.token_urlsafe(32)
    # The server's stderr is read only when it stops: the requests below log a few lines only.
    server = Server(url, "--access-log", "--log-format", "json", SEDMA_ELO_ADMIN_KEY=admin)
    base = server.base
    try:
        answers = [
            _call(base, "/v1/admin/keys", admin),
            _call(base, "/v1/matches", wrong, b"{}"),
            _call(base, "/v1/matches", admin, json.dumps({"match_id": admin}).encode()),
        ]
    finally:
        out, err = server.stop()
    assert [status for status, _ in answers] == [200, 401, 422]
    lines = [json.loads(line) for line in err.splitlines() if line.strip()]
    start = next(line for line in lines if line["message"].startswith("sedma-elo serving"))
    assert start["url"] == base and start["processes"] == 1 and "reference@" in start["rules"]
    assert start["database"].endswith(f"***@127.0.0.1:5432/{url.rsplit('/', 1)[1]}")
    access = [line for line in lines if line["logger"] == "sedma_elo.service.access"]
    assert [(a["path"], a["status"], a["request_id"]) for a in access if a["path"] != "/healthz"] == [
        ("/v1/admin/keys", 200, answers[0][1]),
        ("/v1/matches", 401, answers[1][1]),
        ("/v1/matches", 422, answers[2][1]),
    ]
    for secret in (password, admin, wrong):
        assert secret not in out + err
