"""The JSON game record: reading, writing, and the validator that replays every move.

The only module of :mod:`sedma_elo.game` that does I/O (reading and writing record files). Format
(``docs/game.md`` has a full example)::

    {
      "format": "sedma-game/1",
      "match_id": "m-1",                      optional
      "played_at": "2026-11-29T12:00:00+00:00", optional, ISO 8601
      "players": ["alice", "bob"],            seats 0, 1 (four players: seats 0+2 against 1+3)
      "rules": {"target": 3, ...},            optional, see GameRules; missing keys take defaults
      "seed": 42,                             optional: rounds without a "deck" are dealt from it
      "rounds": [
        {"deck": ["Ah", "7c", ...],           optional when "seed" is given: all 32 cards in order
         "moves": [{"player": 0, "move": "Ah"}, {"player": 1, "move": "7c"},
                   {"player": 0, "move": "stop"}, ...]}
      ]
    }

Every card played and every decision to stop a trick the leader could continue is a move, in order.
A continuation is simply the leader's next card. The validator raises
:class:`~sedma_elo.errors.GameRecordError` with ``field`` like ``rounds[1].moves[17]`` and a message
naming the move (``move 18 of round 2``) and the reason; nothing is rated from a rejected record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..core.model import check_player_id
from ..errors import GameRecordError, ValidationError
from .cards import N_CARDS, deal_deck, format_card, parse_card
from .config import GameRules
from .state import STOP, RoundResult, RoundState, format_move, next_first_leader, round_stake

__all__ = [
    "FORMAT",
    "GameRecord",
    "Move",
    "Replay",
    "RoundRecord",
    "dumps_record",
    "iter_positions",
    "load_record",
    "loads_record",
    "parse_record",
    "record_to_dict",
    "replay",
]

FORMAT = "sedma-game/1"
_TOP_KEYS = ("format", "match_id", "played_at", "players", "rules", "seed", "rounds")
_MAX_SEED = (1 << 64) - 1
_MAX_MOVES = 256


@dataclass(frozen=True, slots=True)
class Move:
    """One move: the seat that made it and the card (``0..31``) or :data:`~.state.STOP`."""

    player: int
    move: int


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One round: its deck order (32 cards, dealt from the front) and its moves in order."""

    deck: tuple[int, ...]
    moves: tuple[Move, ...]


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A parsed (structurally valid, not yet replayed) match record; seat ``i`` is ``players[i]``."""

    players: tuple[str, ...]
    rules: GameRules
    rounds: tuple[RoundRecord, ...]
    seed: int | None = None
    match_id: str | None = None
    played_at: str | None = None


@dataclass(frozen=True, slots=True)
class Replay:
    """A record replayed under its rules: every move legal, the match finished.

    Attributes:
        results: each round's outcome.
        first_leaders: the seat that led each round's first trick.
        match_points: match points of side 0 and side 1 at the end.
        winner: the side that won the match (0 or 1).
    """

    results: tuple[RoundResult, ...]
    first_leaders: tuple[int, ...]
    match_points: tuple[int, int]
    winner: int


def _where(r: int, i: int) -> tuple[str, str]:
    return f"rounds[{r}].moves[{i}]", f"move {i + 1} of round {r + 1}"


def _parse_move(raw: object, r: int, i: int, players: int) -> Move:
    field, name = _where(r, i)
    if not isinstance(raw, Mapping):
        raise GameRecordError(field, f"{name}: must be an object like {{'player': 0, 'move': 'Ah'}}")
    extra = set(raw) - {"player", "move"}
    if extra:
        raise GameRecordError(field, f"{name}: unknown key {sorted(extra)[0]!r} (allowed: player, move)")
    player = raw.get("player")
    if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < players:
        raise GameRecordError(
            field, f"{name}: 'player' must be a seat number 0..{players - 1}, got {player!r}"
        )
    text = raw.get("move")
    if text == "stop":
        return Move(player, STOP)
    try:
        card = parse_card(text)
    except ValueError as exc:
        raise GameRecordError(field, f"{name}: {exc}") from None
    return Move(player, card)


def _parse_deck(raw: object, r: int) -> tuple[int, ...]:
    field = f"rounds[{r}].deck"
    if not isinstance(raw, list) or len(raw) != N_CARDS:
        raise GameRecordError(field, f"must be a list of all {N_CARDS} cards")
    seen: dict[int, int] = {}
    deck = []
    for j, text in enumerate(raw):
        try:
            card = parse_card(text)
        except ValueError as exc:
            raise GameRecordError(f"{field}[{j}]", str(exc)) from None
        if card in seen:
            raise GameRecordError(
                f"{field}[{j}]", f"card {format_card(card)} appears twice (also at {seen[card]})"
            )
        seen[card] = j
        deck.append(card)
    return tuple(deck)


def parse_record(data: object) -> GameRecord:
    """Check the structure of a decoded JSON record and build a :class:`GameRecord` (moves not replayed)."""
    if not isinstance(data, Mapping):
        raise GameRecordError("record", "must be a JSON object")
    for key in data:
        if key not in _TOP_KEYS:
            raise GameRecordError(str(key), f"unknown key (allowed: {', '.join(_TOP_KEYS)})")
    if data.get("format") != FORMAT:
        raise GameRecordError("format", f"must be {FORMAT!r}, got {data.get('format')!r}")
    rules = GameRules.from_mapping(data.get("rules", {}))
    players_raw = data.get("players")
    if not isinstance(players_raw, list) or len(players_raw) != rules.players:
        raise GameRecordError("players", f"must be a list of {rules.players} player ids (rules.players)")
    try:
        players = tuple(check_player_id(f"players[{i}]", p) for i, p in enumerate(players_raw))
    except ValidationError as exc:
        raise GameRecordError(exc.field, exc.reason) from None
    if len(set(players)) != len(players):
        raise GameRecordError("players", "every player must be distinct")
    seed = data.get("seed")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_SEED
    ):
        raise GameRecordError("seed", f"must be an integer in [0, 2**64 - 1], got {seed!r}")
    match_id = data.get("match_id")
    if match_id is not None:
        try:
            match_id = check_player_id("match_id", match_id)
        except ValidationError as exc:
            raise GameRecordError("match_id", exc.reason) from None
    played_at = data.get("played_at")
    if played_at is not None:
        if not isinstance(played_at, str):
            raise GameRecordError("played_at", "must be an ISO 8601 date-time string")
        try:
            datetime.fromisoformat(played_at)
        except ValueError:
            raise GameRecordError("played_at", f"not an ISO 8601 date-time: {played_at!r}") from None
    rounds_raw = data.get("rounds")
    if not isinstance(rounds_raw, list) or not rounds_raw:
        raise GameRecordError("rounds", "must be a non-empty list of rounds")
    rounds = []
    for r, rr in enumerate(rounds_raw):
        if not isinstance(rr, Mapping):
            raise GameRecordError(f"rounds[{r}]", "must be an object with 'moves' (and 'deck' unless seeded)")
        extra = set(rr) - {"deck", "moves"}
        if extra:
            raise GameRecordError(f"rounds[{r}].{sorted(extra)[0]}", "unknown key (allowed: deck, moves)")
        if "deck" in rr:
            deck = _parse_deck(rr["deck"], r)
        elif seed is not None:
            deck = tuple(deal_deck(seed, r))
        else:
            raise GameRecordError(f"rounds[{r}].deck", "missing, and the record has no 'seed' to deal from")
        moves_raw = rr.get("moves")
        if not isinstance(moves_raw, list) or len(moves_raw) > _MAX_MOVES:
            raise GameRecordError(f"rounds[{r}].moves", f"must be a list of at most {_MAX_MOVES} moves")
        moves = tuple(_parse_move(m, r, i, rules.players) for i, m in enumerate(moves_raw))
        rounds.append(RoundRecord(deck, moves))
    return GameRecord(players, rules, tuple(rounds), seed, match_id, played_at)


def loads_record(text: str | bytes) -> GameRecord:
    """Parse a record from JSON text (structure only; call :func:`replay` to check the moves)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GameRecordError(
            "record", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except UnicodeDecodeError as exc:
        raise GameRecordError("record", f"not UTF-8 text: {exc.reason}") from None
    return parse_record(data)


def load_record(path: str | Path) -> GameRecord:
    """Read and parse a record file (structure only). ``OSError`` propagates for unreadable files."""
    return loads_record(Path(path).read_bytes())


def record_to_dict(record: GameRecord) -> dict[str, object]:
    """The record as a JSON-ready dict; a round's deck is left out when the seed deals it."""
    out: dict[str, object] = {"format": FORMAT}
    if record.match_id is not None:
        out["match_id"] = record.match_id
    if record.played_at is not None:
        out["played_at"] = record.played_at
    out["players"] = list(record.players)
    out["rules"] = record.rules.to_dict()
    if record.seed is not None:
        out["seed"] = record.seed
    rounds = []
    for r, rnd in enumerate(record.rounds):
        entry: dict[str, object] = {}
        if record.seed is None or list(rnd.deck) != deal_deck(record.seed, r):
            entry["deck"] = [format_card(c) for c in rnd.deck]
        entry["moves"] = [{"player": m.player, "move": format_move(m.move)} for m in rnd.moves]
        rounds.append(entry)
    out["rounds"] = rounds
    return out


_MOVE_BLOCK = re.compile(r'\{\s*"player": (\d+),\s*"move": ("[^"]+")\s*\}')
_CARD_LIST = re.compile(r'\[\s*((?:"[^"]+",\s*)*"[^"]+")\s*\]')


def dumps_record(record: GameRecord, *, pretty: bool = False) -> str:
    """The record as JSON text; ``pretty`` puts each move (and each deck) on one line of its own."""
    data = record_to_dict(record)
    if not pretty:
        return json.dumps(data)
    text = json.dumps(data, indent=1)
    text = _MOVE_BLOCK.sub(r'{"player": \1, "move": \2}', text)
    return _CARD_LIST.sub(lambda m: "[" + re.sub(r",\s*", ", ", m.group(1)) + "]", text)


def iter_positions(record: GameRecord) -> Iterator[tuple[int, int, RoundState, Move]]:
    """Replay ``record``, yielding ``(round_index, move_index, state_before, move)`` for every move.

    Each yielded state is the live state about to receive the move: copy it to keep it. Raises
    :class:`GameRecordError` at the first illegal or inconsistent move, a round left unfinished, a
    round after the match was decided, or a match that ends undecided.
    """
    rules = record.rules
    points = [0, 0]
    first = 0
    prev_winner = 0
    for r, rnd in enumerate(record.rounds):
        if max(points) >= rules.target:
            raise GameRecordError(
                f"rounds[{r}]", f"round {r + 1}: the match was already decided ({points[0]}:{points[1]})"
            )
        first = next_first_leader(rules, r, first, prev_winner)
        state = RoundState(list(rnd.deck), rules.players, first)
        for i, mv in enumerate(rnd.moves):
            field, name = _where(r, i)
            if state.done:
                raise GameRecordError(field, f"{name}: the round is already over (all cards are played)")
            if mv.player != state.to_move:
                why = " (the leader decides whether to continue the trick)" if state.deciding else ""
                raise GameRecordError(
                    field, f"{name}: player {mv.player} is not to move; player {state.to_move} is{why}"
                )
            reason = state.check(mv.move)
            if reason is not None:
                raise GameRecordError(field, f"{name} (player {mv.player}, {format_move(mv.move)}): {reason}")
            yield r, i, state, mv
            state.play(mv.move)
        if not state.done:
            raise GameRecordError(
                f"rounds[{r}].moves",
                f"round {r + 1} ends after {len(rnd.moves)} moves but is not over "
                f"(player {state.to_move} to move)",
            )
        res = state.result()
        points[res.winner] += round_stake(rules, res)
        prev_winner = res.winner
    if max(points) < rules.target:
        raise GameRecordError(
            "rounds", f"the match is unfinished: {points[0]}:{points[1]}, {rules.target} match points needed"
        )


def replay(record: GameRecord) -> Replay:
    """Replay and validate every move of ``record``; raises :class:`GameRecordError` naming the move."""
    rules = record.rules
    results: list[RoundResult] = []
    leaders: list[int] = []
    state: RoundState | None = None
    last_round = -1
    for r, _i, st, _mv in iter_positions(record):
        if r != last_round:
            if state is not None:
                results.append(state.result())
            leaders.append(st.leader)
            last_round = r
        state = st
    if state is not None:
        results.append(state.result())
    points = [0, 0]
    for res in results:
        points[res.winner] += round_stake(rules, res)
    return Replay(tuple(results), tuple(leaders), (points[0], points[1]), 0 if points[0] > points[1] else 1)
