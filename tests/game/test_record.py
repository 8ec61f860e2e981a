"""The JSON game record: round trip, and the validator naming each bad move."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from sedma_elo.errors import GameRecordError
from sedma_elo.game.bots import GreedyBot, RandomBot, play_match
from sedma_elo.game.cards import format_card
from sedma_elo.game.config import GameRules
from sedma_elo.game.record import dumps_record, loads_record, parse_record, record_to_dict, replay


def _record_dict(seed: int = 11) -> dict[str, Any]:
    played = play_match([RandomBot(seed), GreedyBot()], ["ann", "bob"], seed, match_id="m1")
    return record_to_dict(played.record)


def _error(data: object) -> GameRecordError:
    with pytest.raises(GameRecordError) as info:
        replay(parse_record(data))
    return info.value


def test_record_round_trips_through_json() -> None:
    """A bot match written and read back is the same record and replays to the same result."""
    played = play_match([RandomBot(3), GreedyBot()], ["ann", "bob"], 3, GameRules(target=5), match_id="x")
    text = dumps_record(played.record)
    back = loads_record(text)
    assert back == played.record
    assert replay(back).match_points == played.match_points


def test_seeded_rounds_omit_the_deck_and_explicit_decks_are_kept() -> None:
    """With a seed the deck is implied; the same record with explicit decks replays identically."""
    data = _record_dict()
    assert all("deck" not in r for r in data["rounds"])
    explicit = copy.deepcopy(data)
    rec = parse_record(data)
    for r, rnd in zip(explicit["rounds"], rec.rounds, strict=True):
        r["deck"] = [format_card(c) for c in rnd.deck]
    del explicit["seed"]
    assert replay(parse_record(explicit)) == replay(rec)


def test_malformed_json_is_refused() -> None:
    """Broken JSON names the line and column."""
    with pytest.raises(GameRecordError, match=r"not valid JSON.*line 1"):
        loads_record('{"format": ')


def test_unknown_card_names_the_move() -> None:
    """An unknown card code is refused at its move."""
    data = _record_dict()
    data["rounds"][0]["moves"][4]["move"] = "Zz"
    err = _error(data)
    assert (
        err.field == "rounds[0].moves[4]" and "move 5 of round 1" in str(err) and "unknown card" in str(err)
    )


def test_card_played_twice_is_refused() -> None:
    """Replaying an earlier card of the round again is 'already played'."""
    data = _record_dict()
    moves = data["rounds"][0]["moves"]
    # Move 2 answers the lead with a card of seat 1; find seat 1's next move and make it repeat move 2.
    later = next(
        i
        for i in range(2, len(moves))
        if moves[i]["player"] == moves[1]["player"] and moves[i]["move"] != "stop"
    )
    moves[later]["move"] = moves[1]["move"]
    err = _error(data)
    assert err.field == f"rounds[0].moves[{later}]" and "already played" in str(err)


def test_card_not_in_hand_is_refused() -> None:
    """Playing a card the other player holds is refused, naming player and card."""
    data = _record_dict()
    rec = parse_record(data)
    first_card_of_seat1 = rec.rounds[0].deck[1]
    data["rounds"][0]["moves"][0]["move"] = format_card(first_card_of_seat1)
    err = _error(data)
    assert err.field == "rounds[0].moves[0]" and "does not hold" in str(err)


def test_wrong_player_is_refused() -> None:
    """A move by the player not to move names who is."""
    data = _record_dict()
    data["rounds"][0]["moves"][1]["player"] = data["rounds"][0]["moves"][0]["player"]
    err = _error(data)
    assert err.field == "rounds[0].moves[1]" and "is not to move" in str(err)


def test_stop_without_a_pending_decision_is_an_impossible_continuation() -> None:
    """'stop' at a lead is refused."""
    data = _record_dict()
    data["rounds"][0]["moves"].insert(0, {"player": 0, "move": "stop"})
    err = _error(data)
    assert err.field == "rounds[0].moves[0]" and "'stop'" in str(err)


def _decision_record() -> tuple[dict[str, Any], int]:
    """A record with a continue/stop decision, and the index of that decision's move."""
    for seed in range(200):
        data = _record_dict(seed)
        rec = parse_record(data)
        from sedma_elo.game.record import iter_positions

        for r, i, state, _mv in iter_positions(rec):
            if r == 0 and state.deciding:
                return data, i
    raise AssertionError("no decision found")


def test_continuing_with_a_non_matching_card_is_refused() -> None:
    """At a decision the leader may only continue with the led rank or a seven."""
    data, i = _decision_record()
    rec = parse_record(data)
    from sedma_elo.game.record import iter_positions

    state = next(st for r, j, st, _ in iter_positions(rec) if r == 0 and j == i)
    led = state.led
    bad = next(c for c in range(32) if state.hands[state.to_move] >> c & 1 and c >> 2 not in (led, 0))
    data["rounds"][0]["moves"][i]["move"] = format_card(bad)
    err = _error(data)
    assert err.field == f"rounds[0].moves[{i}]" and "continued" in str(err)


def test_answering_while_the_leader_decides_is_a_wrong_player() -> None:
    """When the leader decides, a move by the other player says the leader decides."""
    data, i = _decision_record()
    data["rounds"][0]["moves"][i]["player"] = 1 - data["rounds"][0]["moves"][i]["player"]
    err = _error(data)
    assert "leader decides" in str(err)


def test_unfinished_round_is_refused() -> None:
    """A round whose moves stop early names the round."""
    data = _record_dict()
    data["rounds"][0]["moves"].pop()
    err = _error(data)
    assert err.field == "rounds[0].moves" and "not over" in str(err)


def test_round_after_the_match_is_decided_is_refused() -> None:
    """An extra round after the target was reached is refused."""
    data = _record_dict()
    data["rounds"].append(copy.deepcopy(data["rounds"][0]))
    err = _error(data)
    assert err.field == f"rounds[{len(data['rounds']) - 1}]" and "already decided" in str(err)


def test_unfinished_match_is_refused() -> None:
    """A record that stops before a side reaches the target is refused."""
    data = _record_dict()
    data["rules"]["target"] = 1000
    err = _error(data)
    assert err.field == "rounds" and "unfinished" in str(err)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.update(players=["ann"]), "players"),
        (lambda d: d.update(players=["ann", "ann"]), "players"),
        (lambda d: d.update(players=["ann", "Jose\u0301"], match_id="m\u2028"), "match_id"),
        (lambda d: d.update(players=["ann", "bob\u202e"]), "players[1]"),
        (lambda d: d.update(players=["ann", "team/bob"]), "players[1]"),
        (lambda d: d.update(players=["Jos\u00e9", "Jose\u0301"]), "players"),
        (lambda d: d.update(seed=-1), "seed"),
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d.update(played_at="yesterday"), "played_at"),
        (lambda d: d["rules"].update(target=0), "rules.target"),
        (lambda d: d["rules"].update(colour="red"), "rules.colour"),
        (lambda d: d.pop("seed"), "rounds[0].deck"),
        (lambda d: d["rounds"][0].update(deck=["Ah"] * 32), "rounds[0].deck[1]"),
        (lambda d: d["rounds"][0]["moves"].__setitem__(0, ["0", "Ah"]), "rounds[0].moves[0]"),
        (lambda d: d["rounds"][0]["moves"][0].update(player=5), "rounds[0].moves[0]"),
    ],
)
def test_structural_errors_name_the_field(mutate: Any, field: str) -> None:
    """Each structural mistake is refused with the field that holds it."""
    data = _record_dict()
    mutate(data)
    err = _error(json.loads(json.dumps(data)))
    assert err.field == field


def test_player_ids_are_normalised_to_nfc() -> None:
    """A record's player ids and match id are held in NFC, as everywhere else ids enter."""
    data = _record_dict()
    data["players"] = ["Jose\u0301", "bob"]
    data["match_id"] = "m\u0301"
    record = parse_record(data)
    assert record.players == ("Jos\u00e9", "bob")
    assert record.match_id == "\u1e3f"  # LATIN SMALL LETTER M WITH ACUTE
