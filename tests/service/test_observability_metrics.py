"""GET /metrics (Prometheus text format), /livez and /readyz."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import Api, make_api, single
from needs import PG_ADMIN
from sedma_elo.storage import open_database


@pytest.fixture
def api(tmp_path: Any) -> Iterator[Api]:
    """An app on a fresh SQLite file."""
    yield from make_api(f"sqlite:///{tmp_path}/ledger.db")


def _samples(api: Api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = api.client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def _get(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_requests_are_counted_by_route_template_and_status(api: Api) -> None:
    """Two 404 player lookups count once under /v1/players/{player_id}, not under each path."""
    route = {"method": "GET", "route": "/v1/players/{player_id}", "status": "404"}
    before = _samples(api)
    api.get("/v1/players/nobody-1")
    api.get("/v1/players/nobody-2")
    after = _samples(api)
    assert (
        _get(after, "sedma_elo_http_requests_total", **route)
        - _get(before, "sedma_elo_http_requests_total", **route)
        == 2
    )
    assert (
        _get(after, "sedma_elo_http_request_duration_seconds_count", **route)
        - _get(before, "sedma_elo_http_request_duration_seconds_count", **route)
        == 2
    )


def test_unknown_paths_share_one_label(api: Api) -> None:
    """Paths no route matches are counted under <unmatched>, so random URLs cannot grow the metrics."""
    api.get("/no/such/path/" + "x" * 20)
    samples = _samples(api)
    unmatched = {"method": "GET", "route": "<unmatched>", "status": "404"}
    assert _get(samples, "sedma_elo_http_requests_total", **unmatched) >= 1
    assert not any("/no/such/path" in str(labels) for _, labels in samples)


def test_direct_writes_count_matches_batches_and_the_ledger(api: Api) -> None:
    """Three new matches and one repeat: +3 applied, +4 batched submissions, ledger size 3, queue empty."""
    before = _samples(api)
    for body in (single("m1"), single("m2", "carol", "dave"), single("m3"), single("m1")):
        assert api.post(body).status_code in (200, 201)
    after = _samples(api)

    def delta(name: str, **labels: str) -> float:
        return _get(after, name, **labels) - _get(before, name, **labels)

    assert delta("sedma_elo_matches_applied_total") == 3
    assert delta("sedma_elo_write_batch_size_sum") == 4
    assert delta("sedma_elo_http_requests_total", method="POST", route="/v1/matches", status="201") == 3
    assert delta("sedma_elo_http_requests_total", method="POST", route="/v1/matches", status="200") == 1
    assert _get(after, "sedma_elo_ledger_matches") == 3
    assert _get(after, "sedma_elo_write_queue_depth") == 0


def test_an_index_fault_is_counted_at_the_next_scrape(api: Api) -> None:
    """sedma_elo_index_faults is 0 on a migrated ledger and 1 once a declared index is dropped."""
    assert _get(_samples(api), "sedma_elo_index_faults") == 0
    db = open_database(api.url)
    try:
        with db.begin_write() as conn:
            conn.exec_driver_sql("DROP INDEX ix_games_jobs")
    finally:
        db.dispose()
    assert _get(_samples(api), "sedma_elo_index_faults") == 1


def test_metrics_can_be_switched_off(tmp_path: Any) -> None:
    """With metrics=False requests are not counted (the endpoint still answers)."""
    for api in make_api(f"sqlite:///{tmp_path}/ledger.db", metrics=False):
        route = {"method": "GET", "route": "/v1/versions", "status": "200"}
        before = _get(_samples(api), "sedma_elo_http_requests_total", **route)
        api.get("/v1/versions")
        assert _get(_samples(api), "sedma_elo_http_requests_total", **route) == before


def test_livez_and_readyz_answer_ok(api: Api) -> None:
    """A running app with its database is alive and ready."""
    assert api.get("/livez").json() == {"status": "ok"}
    assert api.get("/readyz").json() == {"status": "ready", "database": "sqlite"}


def test_probes_and_metrics_are_documented(api: Api) -> None:
    """/metrics, /livez and /readyz are in the OpenAPI schema; /readyz documents its 503."""
    paths = api.get("/openapi.json").json()["paths"]
    assert {"/metrics", "/livez", "/readyz"} <= set(paths)
    assert "503" in paths["/readyz"]["get"]["responses"]


@pytest.mark.postgres
def test_readyz_answers_503_and_counts_an_error_when_the_database_is_gone(
    new_pg_database: Callable[[], str],
) -> None:
    """Connections refused by PostgreSQL: /readyz is 503 with a JSON body, /livez stays 200."""
    url = new_pg_database()
    name = url.rsplit("/", 1)[1]
    for api in make_api(url):
        assert api.get("/readyz").status_code == 200
        errors_before = _get(_samples(api), "sedma_elo_database_errors_total")
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
        try:
            response = api.get("/readyz")
            assert response.status_code == 503
            body = response.json()
            assert body["status"] == "not ready" and "cannot be reached" in body["detail"]
            assert api.get("/livez").status_code == 200
            assert _get(_samples(api), "sedma_elo_database_errors_total") > errors_before
        finally:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        assert api.get("/readyz").status_code == 200
