"""``POST /v1/games`` and ``GET /v1/games/{id}``: checked records, the job table, exactly-once application.

The workers here run in the test process (:meth:`GameWorker.drain`); ``test_game_workers.py``
runs them as separate processes and kills them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from games_helpers import analysed_match, bot_record, example_record, expected_ratings, game_body

from conftest import Api, make_api, single
from sedma_elo.core.model import Match
from sedma_elo.errors import ConflictError
from sedma_elo.game.analysis import analyze
from sedma_elo.game.bots import make_bot, play_match
from sedma_elo.game.record import parse_record
from sedma_elo.service.auth import create_key
from sedma_elo.service.games import GameStore
from sedma_elo.service.games.payload import GameIn, check_game, match_submission
from sedma_elo.service.games.store import pending_game_error
from sedma_elo.service.games.worker import GameWorker
from sedma_elo.service.payload import submission_from_match
from sedma_elo.storage import open_database


class GameApi:
    """The API with a key of scope ``games`` besides the write and admin keys."""

    def __init__(self, api: Api, games_key: str) -> None:
        self.api = api
        self.games_key = games_key
        self.client = api.client

    def post(self, body: Any, key: str | None = None) -> Any:
        return self.client.post("/v1/games", json=body, headers=self.api.headers(key or self.games_key))

    def status(self, match_id: str) -> Any:
        return self.client.get(f"/v1/games/{match_id}")

    def drain(self) -> int:
        return GameWorker(self.client.app.state.ledger).drain()


@pytest.fixture
def games(db_url: str) -> Iterator[GameApi]:
    """The app on an empty database of each kind, with a games key."""
    db = open_database(db_url)
    key, _ = create_key(db, "games", "game server")
    db.dispose()
    for api in make_api(db_url):
        yield GameApi(api, key)


def test_a_posted_game_is_queued_then_applied_with_the_analysed_statistics(games: GameApi) -> None:
    """202 with a status URL; after the worker the game is applied with the ratings rate() gives."""
    record = example_record()
    answer = games.post(game_body("g-1", record))
    assert answer.status_code == 202
    assert answer.json() == {"match_id": "g-1", "status": "queued", "status_url": "/v1/games/g-1"}
    assert answer.headers["location"] == "/v1/games/g-1"
    assert games.status("g-1").json()["status"] == "queued"
    assert games.drain() == 1
    view = games.status("g-1").json()
    assert view["status"] == "applied" and view["match_url"] == "/v1/matches/g-1"
    expected = expected_ratings([analysed_match("g-1", record)])
    assert {c["player_id"]: c["rating_after"] for c in view["changes"]} == expected
    match = games.client.get("/v1/matches/g-1").json()
    assert {c["player_id"]: c["rating_after"] for c in match["changes"]} == expected


def test_the_status_carries_the_record_and_the_analysis_with_each_bad_move(games: GameApi) -> None:
    """The analysis equals `analyze --json --details` of the record; bad moves name round, move, player."""
    record = example_record()
    games.post(game_body("g-2", record))
    games.drain()
    view = games.status("g-2").json()
    assert view["record"]["players"] == ["alice", "bob"] and view["record"]["seed"] == record["seed"]
    assert view["analysis"] == analyze(parse_record(record)).to_dict()
    found = {
        (b["player"], b["round"], b["move"], b["played"], tuple(b["better"]))
        for b in view["analysis"]["bad_moves"]
    }
    # The two exact bad moves of the example (tests/game/test_analysis.py works them out by hand).
    assert {("alice", 2, 27, "7c", ("stop",)), ("bob", 3, 29, "Ts", ("7d",))} <= found
    assert all(b["cost"] for b in view["analysis"]["bad_moves"])


def test_a_four_player_game_is_rated_as_two_teams(games: GameApi) -> None:
    """Seats 0 and 2 against 1 and 3; the ratings are those rate() gives for the analysed statistics."""
    from sedma_elo.game.config import GameRules
    from sedma_elo.game.record import record_to_dict

    bots = [make_bot("greedy", i) for i in range(4)]
    played = play_match(bots, ["w1", "x1", "w2", "x2"], 5, GameRules(players=4))
    record = record_to_dict(played.record)
    record.pop("match_id", None)
    assert games.post(game_body("g-4p", record)).status_code == 202
    games.drain()
    view = games.status("g-4p").json()
    assert view["status"] == "applied"
    assert {c["player_id"]: c["side"] for c in view["changes"]} == {
        "w1": "a",
        "w2": "a",
        "x1": "b",
        "x2": "b",
    }
    expected = expected_ratings([analysed_match("g-4p", record)])
    assert {c["player_id"]: c["rating_after"] for c in view["changes"]} == expected


def test_the_same_game_again_gets_the_same_answer(games: GameApi) -> None:
    """A repeat while queued answers 202 as the first time; once applied 200; nothing is applied twice."""
    body = game_body("g-3", bot_record(1))
    first = games.post(body)
    again = games.post(body)
    assert (again.status_code, again.json()) == (first.status_code, first.json())
    games.drain()
    done = games.post(body)
    assert done.status_code == 200 and done.json()["status"] == "applied"
    assert games.drain() == 0
    assert games.client.get("/v1/players/carol").json()["matches_played"] == 1


def test_the_same_id_with_another_record_is_a_conflict(games: GameApi) -> None:
    """409, and the stored game keeps its first record."""
    games.post(game_body("g-4", bot_record(2)))
    answer = games.post(game_body("g-4", bot_record(3)))
    assert answer.status_code == 409
    assert games.status("g-4").json()["record"] == bot_record(2)


def test_an_illegal_move_is_refused_naming_round_and_move(games: GameApi) -> None:
    """422 located at record.rounds[1].moves[4] with "move 5 of round 2"; nothing is stored."""
    record = example_record()
    record["rounds"][1]["moves"][4]["move"] = record["rounds"][1]["moves"][0]["move"]  # a card played already
    answer = games.post(game_body("g-5", record))
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", "record", "rounds[1]", "moves[4]"]
    assert "move 5 of round 2" in error["msg"]
    assert games.status("g-5").status_code == 404
    assert GameStore(games.client.app.state.ledger.db).backlog() == 0


def test_an_unfinished_match_is_refused(games: GameApi) -> None:
    """A record whose last round is missing: 422 on record.rounds, nothing stored."""
    record = example_record()
    record["rounds"].pop()
    answer = games.post(game_body("g-6", record))
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "record", "rounds"]
    assert games.status("g-6").status_code == 404


def test_a_record_with_another_match_id_is_refused(games: GameApi) -> None:
    """The record's own match_id must equal the body's."""
    record = {**example_record(), "match_id": "other"}
    answer = games.post(game_body("g-7", record))
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "record", "match_id"]


def test_a_games_key_cannot_post_raw_statistics(games: GameApi) -> None:
    """POST /v1/matches with a games key answers 403 and stores nothing."""
    answer = games.api.post(single("m-1", stats={"a": {"won_by_24": 5}}), key=games.games_key)
    assert answer.status_code == 403
    assert games.client.get("/v1/matches/m-1").status_code == 404


def test_write_and_admin_keys_may_post_games_and_no_key_may_not(games: GameApi) -> None:
    """write and admin keys are accepted (202); no key is 401."""
    assert games.post(game_body("g-8", bot_record(4)), key=games.api.write_key).status_code == 202
    assert games.post(game_body("g-9", bot_record(5)), key=games.api.admin_key).status_code == 202
    assert games.client.post("/v1/games", json=game_body("g-10", bot_record(6))).status_code == 401


def test_an_id_taken_by_a_match_with_statistics_is_a_conflict(games: GameApi) -> None:
    """A game cannot reuse the match_id of a match posted to POST /v1/matches."""
    assert games.api.post(single("m-2")).status_code == 201
    assert games.post(game_body("m-2", bot_record(7))).status_code == 409
    assert games.status("m-2").status_code == 404


def test_a_game_applied_before_its_job_was_marked_is_not_applied_twice(games: GameApi) -> None:
    """A worker that died after the ledger's commit: the next one finds the match as a repeat."""
    record = bot_record(8)
    game = check_game(GameIn.model_validate(game_body("g-11", record)))
    games.post(game_body("g-11", record))
    ledger = games.client.app.state.ledger
    (outcome,) = ledger.apply([match_submission("g-11", game.played_at, analyze(game.record))])
    assert outcome.status == "created"
    assert games.drain() == 1
    assert games.status("g-11").json()["status"] == "applied"
    assert ledger.ledger_size() == 1
    assert ledger.verify().ok


def test_a_match_posted_under_a_waiting_games_id_is_refused_up_front(games: GameApi) -> None:
    """POST /v1/matches with the id of a queued game: 409 naming match_id; the game is then applied."""
    games.post(game_body("g-12", bot_record(9)))
    answer = games.api.post(single("g-12"))
    assert answer.status_code == 409
    assert answer.json()["detail"].startswith("match_id: 'g-12' is the id of a game record")
    assert games.client.get("/v1/matches/g-12").status_code == 404
    games.drain()
    assert games.status("g-12").json()["status"] == "applied"


def test_a_batch_refuses_only_the_waiting_games_id_in_its_own_transaction(games: GameApi) -> None:
    """A batch with a waiting game's id, a new match and its repeat: only the game's id is refused."""
    games.post(game_body("g-13", bot_record(10)))
    ledger = games.client.app.state.ledger
    subs = [submission_from_match(Match.single(*pair, "a", match_id=mid)) for mid, pair in BATCH]
    with ledger.writer_session() as session:
        outcomes = session.apply(subs, held=pending_game_error)
    assert [o.status for o in outcomes] == ["created", "error", "repeat"]
    assert isinstance(outcomes[1].error, ConflictError) and "g-13" in str(outcomes[1].error)
    assert games.client.get("/v1/matches/g-13").status_code == 404
    assert games.client.get("/v1/matches/m-13").status_code == 200


BATCH = [("m-13", ("ann", "bob")), ("g-13", ("cid", "dan")), ("m-13", ("ann", "bob"))]


def test_a_game_the_ledger_refuses_fails_with_the_reason(games: GameApi) -> None:
    """A match with the game's id that got past the up-front check: the game fails, with the conflict."""
    from sedma_elo.service.payload import MatchIn, submission_from_payload

    games.post(game_body("g-16", bot_record(12)))
    ledger = games.client.app.state.ledger
    (outcome,) = ledger.apply([submission_from_payload(MatchIn.model_validate(single("g-16")))])
    assert outcome.status == "created"
    games.drain()
    view = games.status("g-16").json()
    assert view["status"] == "failed" and "g-16" in view["reason"]
    assert view["analysis"] is not None and view["changes"] is None


def test_the_match_page_of_a_waiting_game_says_it_is_being_analysed(games: GameApi) -> None:
    """/matches/{id} of a queued game: 200 "being analysed", not 404; once applied, the match itself."""
    games.post(game_body("g-17", bot_record(13)))
    waiting = games.client.get("/matches/g-17?lang=en")
    assert waiting.status_code == 200 and "is being analysed" in waiting.text
    assert games.client.get("/matches/g-none?lang=en").status_code == 404
    games.drain()
    applied = games.client.get("/matches/g-17?lang=en")
    assert applied.status_code == 200 and "is being analysed" not in applied.text


def test_the_backlog_gauge_counts_waiting_games(games: GameApi) -> None:
    """sedma_elo_game_backlog is 2 with two games queued and 0 once they are applied."""
    games.post(game_body("g-13", bot_record(10)))
    games.post(game_body("g-14", bot_record(11, ("erin", "fay"))))
    assert "sedma_elo_game_backlog 2.0" in games.client.get("/metrics").text
    games.drain()
    assert "sedma_elo_game_backlog 0.0" in games.client.get("/metrics").text


def test_the_cli_prints_the_same_analysis(games: GameApi, tmp_path: Path) -> None:
    """`sedma-elo analyze GAME --json --details` prints what GET /v1/games/{id} gives as `analysis`."""
    from typer.testing import CliRunner

    from sedma_elo.cli import app

    record = example_record()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    games.post(game_body("g-15", record))
    games.drain()
    printed = CliRunner().invoke(app, ["analyze", str(path), "--json", "--details"])
    assert printed.exit_code == 0
    assert json.loads(printed.stdout) == games.status("g-15").json()["analysis"]


def test_an_unknown_game_is_404(games: GameApi) -> None:
    """GET of a game never posted answers 404 with a JSON body."""
    answer = games.status("nope")
    assert answer.status_code == 404 and "nope" in answer.json()["detail"]
