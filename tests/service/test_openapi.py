"""The OpenAPI schema types every answer, errors included, and real answers match their models."""

from __future__ import annotations

from typing import Any

import pytest
from games_helpers import example_record, game_body
from pydantic import BaseModel

from conftest import Api, single
from sedma_elo import REFERENCE_RULES
from sedma_elo.service import ServiceSettings, create_app
from sedma_elo.service.api import feed_schemas, game_schemas
from sedma_elo.service.api import responses as models
from sedma_elo.service.games.worker import GameWorker


def needs_key(method: str, path: str) -> bool:
    """Whether the service checks a key for this operation: posting matches or games, every admin route."""
    return (method, path) in {("post", "/v1/matches"), ("post", "/v1/games")} or path.startswith("/v1/admin/")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return create_app(ServiceSettings(database_url="sqlite://")).openapi()


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, item in schema["paths"].items() for method, op in item.items()]


def ref_of(response: dict[str, Any]) -> str:
    return str(response["content"]["application/json"]["schema"]["$ref"]).rsplit("/", 1)[-1]


def refs_of(response: dict[str, Any]) -> list[str]:
    """The model of an answer, or each model of an answer that may be one of several (``anyOf``)."""
    schema = response["content"]["application/json"]["schema"]
    return [str(s["$ref"]).rsplit("/", 1)[-1] for s in schema.get("anyOf", [schema])]


def test_every_json_answer_names_a_model(schema: dict[str, Any]) -> None:
    """Each answer of each operation (but the Prometheus text of /metrics) has a model's schema."""
    seen = 0
    for method, path, op in operations(schema):
        for code, response in op["responses"].items():
            if (path, code) == ("/metrics", "200"):
                continue
            for name in refs_of(response):
                assert schema["components"]["schemas"][name]["properties"], (method, path, code)
            seen += 1
    assert seen > 60


def test_errors_share_three_models(schema: dict[str, Any]) -> None:
    """4xx answers are Error (422: ValidationErrors), 500 is ServerError, with the headers they send."""
    expected = {"422": "ValidationErrors", "500": "ServerError"}
    for _, path, op in operations(schema):
        for code, response in op["responses"].items():
            if code >= "400" and (path, code) != ("/readyz", "503"):
                assert ref_of(response) == expected.get(code, "Error"), (path, code)
            if code in ("429", "503") and path != "/readyz":
                assert "Retry-After" in response["headers"]
            if code == "401":
                assert "WWW-Authenticate" in response["headers"]


def test_keyed_operations_document_401_403_and_429(schema: dict[str, Any]) -> None:
    """Exactly the operations that take a key declare the bearer scheme, with 401, 403 and 429."""
    for method, path, op in operations(schema):
        codes = set(op["responses"])
        assert bool(op.get("security")) == needs_key(method, path), (method, path)
        if needs_key(method, path):
            assert {"401", "403", "429"} <= codes, (method, path)
        else:
            assert not {"401", "403"} & codes, (method, path)


def test_operations_with_a_body_document_413_415_422(schema: dict[str, Any]) -> None:
    """A route that reads a JSON body documents the body limit, the content type and validation."""
    with_body = [(m, p, op) for m, p, op in operations(schema) if "requestBody" in op]
    assert len(with_body) >= 4
    for method, path, op in with_body:
        assert {"413", "415", "422"} <= set(op["responses"]), (method, path)


def test_every_operation_documents_the_500_answer(schema: dict[str, Any]) -> None:
    """Every operation can answer 500, whose body carries the request id."""
    for method, path, op in operations(schema):
        assert ref_of(op["responses"]["500"]) == "ServerError", (method, path)
    assert schema["components"]["schemas"]["ServerError"]["required"] == ["detail", "request_id"]


def test_the_direct_write_route_is_documented_with_its_answers(schema: dict[str, Any]) -> None:
    """POST /v1/matches (served by the direct route) documents 201 and 200 as MatchView, or
    MatchSummary for the documented ``Prefer`` header."""
    post = schema["paths"]["/v1/matches"]["post"]
    for status in ("201", "200"):
        answer = post["responses"][status]["content"]["application/json"]["schema"]["anyOf"]
        assert [a["$ref"].rsplit("/", 1)[1] for a in answer] == ["MatchView", "MatchSummary"]
    assert {"409", "503"} <= set(post["responses"])
    assert [(p["name"], p["in"]) for p in post["parameters"]] == [("prefer", "header")]


def test_models_are_closed(schema: dict[str, Any]) -> None:
    """Every answer model forbids keys it does not name, so an undocumented field is caught."""
    names = (
        "MatchView",
        "Change",
        "Score",
        "MatchSummary",
        "RatingMove",
        "Player",
        "LeaderboardPage",
        "Error",
    )
    names += ("ServerError",)
    feed = ("ChangesOut", "MatchChange", "VoidChange", "RerateChange", "WebhookOut", "WebhooksOut")
    games = ("GameAccepted", "GameView", "AnalysisOut", "BadMoveOut", "ReportOut")
    for name in (*names, *feed, *games):
        assert schema["components"]["schemas"][name]["additionalProperties"] is False


def check(model: type[BaseModel], response: Any, status: int) -> Any:
    """``response`` has ``status`` and its body is exactly an instance of ``model``."""
    assert response.status_code == status, response.text
    model.model_validate_json(response.content)
    return response.json()


def test_real_answers_match_their_models(api: Api) -> None:
    """Each route's real answers (reads, writes, admin) validate against their closed models."""
    c, admin = api.client, api.headers(api.admin_key)
    check(models.MatchView, api.post(single("m-1")), 201)
    check(models.MatchView, api.post(single("m-1")), 200)
    minimal = {"Prefer": "return=minimal"} | api.headers(api.write_key)
    check(models.MatchSummary, c.post("/v1/matches", json=single("m-1"), headers=minimal), 200)
    check(models.MatchSummary, c.post("/v1/matches", json=single("m-2"), headers=minimal), 201)
    team = {"match_id": "t-1", "team_a": ["ann", "bob"], "team_b": ["cid", "dan"], "winner": "draw"}
    check(models.MatchView, api.post({**team, "stats": {"ann": {"won_by_16": 1}}}), 201)
    check(models.MatchView, c.get("/v1/matches/t-1", params={"lang": "de"}), 200)
    check(models.Player, c.get("/v1/players/alice"), 200)
    check(models.PlayerList, c.get("/v1/players", params={"prefix": "a"}), 200)
    check(models.HistoryPage, c.get("/v1/players/bob/history", params={"limit": 1}), 200)
    check(models.RecentChanges, c.get("/v1/recent-changes", params={"players": ["bob", "zoe"]}), 200)
    check(models.LeaderboardPage, c.get("/v1/leaderboard", params={"limit": 2}), 200)
    check(models.LeaderboardPage, c.get("/v1/leaderboard/around/bob"), 200)
    check(models.VersionList, c.get("/v1/versions"), 200)
    check(models.MatchView, api.admin("/v1/admin/matches/m-1/void", {"reason": "test"}), 200)
    rules = REFERENCE_RULES.replace(version="2.0").to_toml()
    check(models.Version, api.admin("/v1/admin/rules", {"rules_toml": rules, "activate": False}), 201)
    check(models.Version, api.admin("/v1/admin/versions/2/activate", {}), 200)
    new = check(models.NewKey, api.admin("/v1/admin/keys", {"scope": "write"}), 201)
    check(models.KeyList, c.get("/v1/admin/keys", headers=admin), 200)
    check(models.Key, c.delete(f"/v1/admin/keys/{new['id']}", headers=admin), 200)
    check(models.Live, c.get("/livez"), 200)
    check(models.Health, c.get("/healthz"), 200)
    check(models.Ready, c.get("/readyz"), 200)


def test_feed_webhook_and_game_answers_match_their_models(api: Api) -> None:
    """The change feed, the webhook admin routes and the game routes answer their closed models."""
    c, admin = api.client, api.headers(api.admin_key)
    check(models.MatchView, api.post(single("m-1")), 201)
    check(models.MatchView, api.admin("/v1/admin/matches/m-1/void", {"reason": "test"}), 200)
    rules = REFERENCE_RULES.replace(version="2.0").to_toml()
    check(models.Version, api.admin("/v1/admin/rules", {"rules_toml": rules}), 201)
    page = check(feed_schemas.ChangesOut, c.get("/v1/changes"), 200)
    assert [item["kind"] for item in page["items"]] == ["match", "void", "rerate"]
    hook = {"url": "http://127.0.0.1:9/hook", "secret": "s" * 16, "label": "test", "after": 0}
    made = check(feed_schemas.WebhookOut, api.admin("/v1/admin/webhooks", hook), 201)
    check(feed_schemas.WebhooksOut, c.get("/v1/admin/webhooks", headers=admin), 200)
    check(feed_schemas.WebhookOut, c.delete(f"/v1/admin/webhooks/{made['id']}", headers=admin), 200)
    body = game_body("g-1", example_record())
    check(game_schemas.GameAccepted, _post_game(api, body), 202)
    check(game_schemas.GameView, c.get("/v1/games/g-1"), 200)
    assert GameWorker(c.app.state.ledger).drain() == 1
    check(game_schemas.GameAccepted, _post_game(api, body), 200)
    applied = check(game_schemas.GameView, c.get("/v1/games/g-1", params={"lang": "it"}), 200)
    assert applied["status"] == "applied" and applied["analysis"]["bad_moves"]


def _post_game(api: Api, body: dict[str, Any]) -> Any:
    return api.client.post("/v1/games", json=body, headers=api.headers(api.write_key))


def test_real_error_answers_match_their_models(api: Api) -> None:
    """401, 403, 404, 409, 413, 415 and 422 answers validate against Error or ValidationErrors."""
    c = api.client
    check(models.MatchView, api.post(single("m-1")), 201)
    check(models.Error, api.post(single("m-2"), key=None), 401)
    check(models.Error, api.post(single("m-2"), key="sk_" + "x" * 40), 401)
    check(models.Error, c.get("/v1/admin/keys", headers=api.headers(api.write_key)), 403)
    check(models.Error, c.get("/v1/players/nobody"), 404)
    check(models.Error, api.post(single("m-1", winner="b")), 409)
    big = b"{" + b" " * 20_000 + b"}"
    headers = {**api.headers(api.write_key), "Content-Type": "application/json"}
    check(models.Error, c.post("/v1/matches", content=big, headers=headers), 413)
    check(
        models.Error,
        c.post("/v1/matches", content=b"x", headers={**headers, "Content-Type": "text/plain"}),
        415,
    )
    check(models.ValidationErrors, api.post({**single("m-3"), "winner": "nobody"}), 422)
    check(models.ValidationErrors, c.get("/v1/leaderboard", params={"limit": 0}), 422)
