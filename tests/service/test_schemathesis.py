"""Schemathesis drives a real server from its OpenAPI schema: no request may cause a 500."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from server import Server

from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def running(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, str]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('fuzz')}/fuzz.db"
    else:
        from conftest import _reset_pg

        url = request.getfixturevalue("pg_database")
        _reset_pg(url)
    db = open_database(url)
    key, _ = create_key(db, "admin", "fuzz")
    db.dispose()
    # Fuzzed subscriptions may name any host: nothing may be sent beyond this machine.
    server = Server(url, SEDMA_ELO_WEBHOOKS="false")
    try:
        yield server, key
    finally:
        server.stop()


def test_no_server_errors(running: tuple[Server, str]) -> None:
    """Any request the schema allows, for every operation, sent with an admin key, gets no 500."""
    server, key = running
    schema = schemathesis.openapi.from_url(f"{server.base}/openapi.json")
    failures: list[str] = []
    statuses: list[int] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=int(os.environ.get("SEDMA_ELO_FUZZ_EXAMPLES", "20")),
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case: Any) -> None:
            response = case.call(base_url=server.base, headers={"Authorization": f"Bearer {key}"})
            statuses.append(response.status_code)
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:200]}"
                )

        check()
    assert not failures, failures
    assert any(s < 300 for s in statuses)  # some requests got through validation
