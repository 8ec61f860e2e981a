"""The direct write route answers as the documented FastAPI route would, and checks the key first."""

from __future__ import annotations

import json
from typing import Any

from conftest import Api, make_api, single

STATS = {"a": {"won_by_16": 1}, "b": {"bad_moves": 2}}
SCRIPT: list[tuple[Any, str | None]] = [
    (single("d-1") | {"stats": STATS}, "write"),
    (single("d-1") | {"stats": STATS}, "write"),  # repeat
    (single("d-1", winner="b"), "write"),  # conflict
    (single("d-2"), None),  # no key
    (single("d-2"), "sk_not_a_key_at_all_but_long_enough_123"),  # unknown key
    (single("d-2"), "admin"),  # an admin key may write too
    (single("d-2") | {"extra": 1}, "write"),  # unknown field
    (single("d-3", a="zoe", b="zoe"), "write"),  # against themself
    (single("d-4") | {"stats": {"a": {"bad_moves": -1}}}, "write"),  # negative count
    (single("d-5") | {"player_a": "x" * 129}, "write"),  # oversized string
    ({"match_id": "d-6", "pad": "y" * 4000}, "write"),  # body over the limit
    (single("d-7") | {"team_a": ["p", "q"], "team_b": ["r", "s"]}, "write"),  # both forms
]


def _answers(api: Api) -> list[tuple[int, Any, str | None]]:
    out = []
    for body, key in SCRIPT:
        real = {"write": api.write_key, "admin": api.admin_key}.get(key or "", key)
        headers = api.headers(real) | {"Content-Type": "application/json"}
        r = api.client.post("/v1/matches", content=json.dumps(body), headers=headers)
        out.append((r.status_code, r.json(), r.headers.get("www-authenticate")))
    return out


def test_direct_and_fastapi_routes_give_the_same_answers(tmp_path: Any) -> None:
    """Good, repeated, conflicting, unauthorised, oversized and invalid posts: equal answers both ways."""
    runs = []
    for direct in (True, False):
        for api in make_api(f"sqlite:///{tmp_path}/{direct}.db", max_body_bytes=2048, rate_limit=0):
            if not direct:
                app: Any = api.client.app
                app.direct = None  # requests now go through FastAPI's middleware, router and post_match
            runs.append(_answers(api))
    direct_run, fastapi_run = runs
    assert [a[0] for a in direct_run] == [201, 200, 409, 401, 401, 201, 422, 422, 422, 422, 413, 422]
    assert direct_run == fastapi_run


def test_malformed_json_without_a_key_answers_401(api: Api) -> None:
    """The key is checked before the body is parsed (FastAPI's own route would parse first: 422)."""
    r = api.client.post("/v1/matches", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
