"""A client generated from a running server's /openapi.json talks to that server, typed both ways.

The client is generated at test time (scripts/generate-client.py, openapi-python-client from
.venv/codegen) into a temporary directory: nothing generated is committed, so nothing can go
stale. It raises on any status its schema does not document, and each answer it parses must
turn back into exactly the JSON the server sent (``to_dict``), so a field the schema lacks, a
field it names that the server does not send, or a type it gets wrong fails here.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from games_helpers import example_record, game_body
from server import Server

from needs import unavailable
from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database

GENERATE = Path(__file__).resolve().parents[2] / "scripts" / "generate-client.py"
PACKAGE = "sedma_elo_client"

# Posted without played_at, so that every answer about them round-trips through the client's
# models to the same JSON (a datetime would come back as +00:00 where the server wrote Z).
SINGLE = {
    "match_id": "g-1",
    "player_a": "alice",
    "player_b": "bob",
    "winner": "a",
    "stats": {"a": {"won_by_16": 1}, "b": {"bad_moves": 2}},
}
TEAM = {"match_id": "g-2", "team_a": ["alice", "carol"], "team_b": ["bob", "dave"], "winner": "draw"}


class Generated:
    """The generated package, a public client, and clients holding a write and an admin key."""

    def __init__(self, base: str, write_key: str, admin_key: str) -> None:
        self.base = base
        self.package = importlib.import_module(PACKAGE)
        self.models = importlib.import_module(f"{PACKAGE}.models")
        self.opened: list[Any] = []
        self.public = self.package.Client(base_url=base, raise_on_unexpected_status=True)
        self.opened.append(self.public)
        self.writer = self.keyed(write_key)
        self.admin = self.keyed(admin_key)

    def keyed(self, key: str) -> Any:
        """A client sending ``key`` (closed with the others)."""
        client = self.package.AuthenticatedClient(
            base_url=self.base, token=key, raise_on_unexpected_status=True
        )
        self.opened.append(client)
        return client

    def close(self) -> None:
        for client in self.opened:
            client.get_httpx_client().close()

    def op(self, tag: str, name: str) -> Any:
        """The module of one operation (``sync_detailed``, ``sync``...)."""
        return importlib.import_module(f"{PACKAGE}.api.{tag}.{name}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('client-db')}/ledger.db"
    db = open_database(url)
    write_key, _ = create_key(db, "write", "generated client")
    admin_key, _ = create_key(db, "admin", "generated client")
    db.dispose()
    running = Server(url)
    try:
        yield running, write_key, admin_key
    finally:
        running.stop()


@pytest.fixture(scope="module")
def gen(server: tuple[Server, str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    running, write_key, admin_key = server
    out = tmp_path_factory.mktemp("client")
    done = subprocess.run(
        [sys.executable, str(GENERATE), str(out), "--url", running.base],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode == 2:
        unavailable(done.stderr.strip())
    assert done.returncode == 0, done.stderr
    sys.path.insert(0, str(out))
    try:
        generated = Generated(running.base, write_key, admin_key)
        yield generated
        generated.close()
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def posted(gen: Generated) -> dict[str, Any]:
    """SINGLE then TEAM posted through the client: their typed answers by match id."""
    post = gen.op("matches", "post_match")
    answers = {}
    for body in (SINGLE, TEAM):
        r = post.sync_detailed(client=gen.writer, body=gen.models.MatchIn.from_dict(body))
        assert r.status_code == 201, r.content
        answers[body["match_id"]] = r.parsed
    return answers


def same_json(response: Any) -> Any:
    """The parsed answer, checked to turn back into exactly the JSON the server sent."""
    assert response.parsed.to_dict() == json.loads(response.content)
    return response.parsed


def test_posting_matches_answers_typed_match_views(gen: Generated, posted: dict[str, Any]) -> None:
    """POST /v1/matches (the direct route) answers MatchView; the match is a SingleMatch or TeamMatch."""
    m = gen.models
    single, team = posted["g-1"], posted["g-2"]
    assert isinstance(single, m.MatchView) and isinstance(single.match, m.SingleMatch)
    assert isinstance(team.match, m.TeamMatch) and team.match.team_b == ["bob", "dave"]
    assert [c.player_id for c in single.changes] == ["alice", "bob"]
    assert single.changes[0].score.bonuses.won_by_16.count == 1
    assert single.changes[1].score.malus.count == 2
    assert team.sequence == single.sequence + 1


def test_a_repeated_post_answers_200_with_the_first_answer(gen: Generated, posted: dict[str, Any]) -> None:
    """The same match again: 200, parsed to the same MatchView as the 201."""
    r = gen.op("matches", "post_match").sync_detailed(
        client=gen.writer, body=gen.models.MatchIn.from_dict(SINGLE)
    )
    assert r.status_code == 200
    assert same_json(r).to_dict() == posted["g-1"].to_dict()


def test_a_minimal_post_answers_a_typed_summary(gen: Generated, posted: dict[str, Any]) -> None:
    """With the documented ``prefer`` header the client parses the first answer's summary."""
    r = gen.op("matches", "post_match").sync_detailed(
        client=gen.writer, body=gen.models.MatchIn.from_dict(SINGLE), prefer="return=minimal"
    )
    assert r.status_code == 200 and r.headers["preference-applied"] == "return=minimal"
    summary = same_json(r)
    assert isinstance(summary, gen.models.MatchSummary)
    first = posted["g-1"]
    assert [(c.player_id, c.rating_after) for c in summary.changes] == [
        (c.player_id, c.rating_after) for c in first.changes
    ]


def test_reads_return_typed_answers_that_round_trip(gen: Generated, posted: dict[str, Any]) -> None:
    """Match, player, search, history, recent changes, leaderboard and around parse and round-trip."""
    c = gen.public
    match = same_json(gen.op("matches", "get_match").sync_detailed("g-1", client=c, lang="de"))
    assert match.sequence == posted["g-1"].sequence
    after = {ch.player_id: ch.rating_after for ch in posted["g-2"].changes}
    player = same_json(gen.op("players", "get_player").sync_detailed("alice", client=c))
    assert (player.rating, player.matches_played, player.provisional) == (after["alice"], 2, True)
    found = same_json(gen.op("players", "search_players").sync_detailed(client=c, prefix="a"))
    assert [p.player_id for p in found.items] == ["alice"]
    history = same_json(gen.op("players", "get_history").sync_detailed("bob", client=c))
    assert [h.sequence for h in history.items] == [posted["g-1"].sequence, posted["g-2"].sequence]
    recent = same_json(gen.op("players", "get_recent_changes").sync_detailed(client=c, players=["dave"]))
    assert [h.match_id for h in recent.items["dave"]] == ["g-2"]
    board = same_json(gen.op("leaderboard", "get_leaderboard").sync_detailed(client=c, limit=10))
    assert sorted(row.player_id for row in board.items) == ["alice", "bob", "carol", "dave"]
    assert [row.rank for row in board.items] == [1, 2, 3, 4]
    assert [row.rating for row in board.items] == sorted((after[p] for p in after), reverse=True)
    around = same_json(gen.op("leaderboard", "get_around").sync_detailed("dave", client=c, span=0))
    assert [row.player_id for row in around.items] == ["dave"]


def test_versions_and_probes_are_typed(gen: Generated) -> None:
    """GET /v1/versions gives Version objects with datetimes; the probes give their models."""
    c, m = gen.public, gen.models
    versions = gen.op("versions", "get_versions").sync(client=c)
    assert [(v.id, v.active, v.created_at.tzinfo is not None) for v in versions.items] == [(1, True, True)]
    assert isinstance(gen.op("meta", "live").sync(client=c), m.Live)
    assert gen.op("meta", "health").sync(client=c).ledger_size >= 2
    assert gen.op("meta", "ready").sync(client=c).database == "sqlite"


def test_admin_routes_create_list_and_revoke_a_key(gen: Generated) -> None:
    """An admin key creates a key (NewKey, secret shown once), lists it, revokes it; it then gets 401."""
    m = gen.models
    new = gen.op("admin", "create_key").sync(client=gen.admin, body=m.KeyIn.from_dict({"scope": "write"}))
    assert isinstance(new, m.NewKey) and new.key.startswith("sk_")
    listed = gen.op("admin", "list_keys").sync(client=gen.admin)
    assert new.id in [k.id for k in listed.items]
    revoked = gen.op("admin", "revoke_key").sync(new.id, client=gen.admin)
    assert isinstance(revoked, m.Key) and revoked.revoked_at is not None
    r = gen.op("matches", "post_match").sync_detailed(
        client=gen.keyed(new.key), body=m.MatchIn.from_dict({**SINGLE, "match_id": "g-9"})
    )
    assert r.status_code == 401 and isinstance(r.parsed, m.Error)


def test_errors_are_typed_objects(gen: Generated) -> None:
    """401, 403, 404 and 422 answers parse as Error or ValidationErrors with the server's words."""
    m = gen.models
    body = m.MatchIn.from_dict({**SINGLE, "match_id": "g-10"})
    unknown = gen.op("matches", "post_match").sync_detailed(client=gen.keyed("sk_" + "x" * 43), body=body)
    assert unknown.status_code == 401 and isinstance(same_json(unknown), m.Error)
    denied = gen.op("admin", "list_keys").sync_detailed(client=gen.writer)
    assert denied.status_code == 403 and "admin" in same_json(denied).detail
    missing = gen.op("players", "get_player").sync_detailed("nobody", client=gen.public)
    assert missing.status_code == 404 and "nobody" in same_json(missing).detail
    stray = m.MatchIn.from_dict({**SINGLE, "match_id": "g-11", "stats": {"zoe": {}}})
    invalid = gen.op("matches", "post_match").sync_detailed(client=gen.writer, body=stray)
    assert invalid.status_code == 422
    assert [e.loc for e in same_json(invalid).detail] == [["body", "stats", "zoe"]]
    limit = gen.op("leaderboard", "get_leaderboard").sync_detailed(client=gen.public, limit=0)
    assert limit.status_code == 422 and same_json(limit).detail[0].loc == ["query", "limit"]


def test_the_change_feed_is_typed(gen: Generated, posted: dict[str, Any]) -> None:
    """GET /v1/changes parses as ChangesOut whose items are MatchChange objects, and round-trips."""
    page = same_json(gen.op("changes", "get_changes").sync_detailed(client=gen.public, limit=500))
    assert isinstance(page, gen.models.ChangesOut) and page.next_after is None
    matches = [item for item in page.items if isinstance(item, gen.models.MatchChange)]
    assert {"g-1", "g-2"} <= {item.match_id for item in matches}
    assert page.poll_after == page.items[-1].sequence


def test_a_webhook_is_registered_listed_and_deleted(gen: Generated) -> None:
    """The webhook admin routes answer WebhookOut / WebhooksOut objects that round-trip."""
    m, admin = gen.models, gen.admin
    body = m.WebhookIn.from_dict({"url": "http://127.0.0.1:9/hook", "secret": "s" * 16, "label": "client"})
    made = same_json(gen.op("admin", "create_webhook").sync_detailed(client=admin, body=body))
    assert isinstance(made, m.WebhookOut) and made.label == "client"
    listed = same_json(gen.op("admin", "list_webhooks").sync_detailed(client=admin))
    assert made.id in [w.id for w in listed.items]
    gone = same_json(gen.op("admin", "delete_webhook").sync_detailed(made.id, client=admin))
    assert gone.id == made.id


def test_a_posted_game_is_typed(gen: Generated) -> None:
    """POST /v1/games answers GameAccepted (202); GET /v1/games/{id} a GameView, both round-trip."""
    m = gen.models
    body = m.GameIn.from_dict(game_body("gm-1", example_record(), played_at=None))
    accepted = gen.op("games", "post_game").sync_detailed(client=gen.writer, body=body)
    assert accepted.status_code == 202 and isinstance(same_json(accepted), m.GameAccepted)
    view = same_json(gen.op("games", "get_game").sync_detailed("gm-1", client=gen.public))
    assert isinstance(view, m.GameView) and view.status_url == accepted.parsed.status_url
    assert (view.match_id, view.status) == ("gm-1", "queued")  # this server runs no game worker
