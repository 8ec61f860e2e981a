"""Per-match statistics from a game record: rounds won by kind, and the bad moves.

A move is judged only where the player had a real choice (moves of two or more ranks, or
continue/stop). A move is **bad** when it lowers what the round is worth to the mover's side (its
signed stake: lost, won plain, as a 16er, as a 24er; see :mod:`.value` and :mod:`.judge`):

* **exact** (two players, stock empty): by the exact value of every move;
* **sampled** (hidden cards, stock at most ``max_stock`` cards): every candidate is solved exactly
  in deals of the cards the mover has not seen, until the share of deals in which the move loses
  value is decided with confidence. Moves earlier in the round (more cards in the stock) are not
  judged: their exact solves cost too much for the speed goal (``docs/game.md``).

The sampling seed comes from the record itself (a hash of its canonical JSON), the configuration's
``seed``, the round and the move: the same record always gets the same verdicts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Literal

from ..core.model import Match, PlayerStats
from .cards import cards_of, format_card, rank_mask
from .config import GameRules
from .judge import Method, Verdict, judge_exact, judge_sampled
from .record import GameRecord, Replay, iter_positions, record_to_dict, replay
from .solver import Solver
from .state import STOP, RoundState, format_move
from .value import ValueSolver, stakes_of

Judge = Literal["all", "exact", "none"]

__all__ = [
    "COST_WORDS",
    "AnalysisConfig",
    "BadMove",
    "Judge",
    "MatchAnalysis",
    "PlayerReport",
    "analyze",
    "cost_detail",
    "cost_words",
    "record_seed",
]


@dataclass(frozen=True, slots=True)
class AnalysisConfig:
    """How bad moves are found (see the module docstring and :mod:`.judge`).

    Attributes:
        share: a sampled move is bad when it loses value in more than this share of the deals.
        confidence: the confidence of a sampled verdict (``0.5 < confidence < 1``).
        min_deals, max_deals: deals solved for a sampled move at first and at most.
        max_listed: when the deals of the unseen cards, up to suits, are at most this many, all of
            them are solved instead of a sample (0: always sample).
        max_listed_close: a sampled verdict that is bad or still open at ``max_deals`` is redone
            over all deals when they are at most this many (0: never), so that no flagged move
            depends on the seed where the deals can be listed.
        max_stock: sampled moves are judged only when the stock holds at most this many cards
            (``None``: 8 for two players, 0 for four: the speed goal, see ``docs/game.md``).
        seed: mixed into the record's own seed; the same record, config and seed give the same result.
        judge: which moves are judged: ``all``, ``exact`` (exact positions only) or ``none``.
    """

    share: float = 0.5
    confidence: float = 0.99
    min_deals: int = 16
    max_deals: int = 2048
    max_listed: int = 512
    max_listed_close: int = 4096
    max_stock: int | None = None
    seed: int = 0
    judge: Judge = "all"

    def __post_init__(self) -> None:
        if not 0 < self.share < 1:
            raise ValueError("share must be in (0, 1)")
        if not 0.5 < self.confidence < 1:
            raise ValueError("confidence must be in (0.5, 1)")
        if not 1 <= self.min_deals <= self.max_deals <= 100_000:
            raise ValueError("deals must satisfy 1 <= min_deals <= max_deals <= 100000")
        if not 0 <= self.max_listed <= 100_000:
            raise ValueError("max_listed must be in [0, 100000]")
        if not 0 <= self.max_listed_close <= 100_000:
            raise ValueError("max_listed_close must be in [0, 100000]")
        if self.max_stock is not None and not 0 <= self.max_stock <= 24:
            raise ValueError("max_stock must be in [0, 24]")
        if self.judge not in ("all", "exact", "none"):
            raise ValueError("judge must be all, exact or none")

    def stock_limit(self, players: int) -> int:
        """The largest stock at which sampled moves are judged."""
        if self.max_stock is not None:
            return self.max_stock
        return 8 if players == 2 else 0


@dataclass(frozen=True, slots=True)
class BadMove:
    """One bad move. ``round`` and ``move`` are 1-based, as in the record's error messages.

    Attributes:
        player: the record's player id.
        hand: the player's hand before the move; ``trick``: the cards already in the trick, in order;
            ``stock``: cards left in the stock; ``score``: points (aces and tens) taken so far by the
            player's side and by the other side.
        played: the move (card or ``stop``); ``better``: the moves judged better.
        cost: what the move cost, in words (e.g. "turned a won round into a lost one at 4:4").
        cost_detail: the same as a code and its numbers, for translation (e.g. ``{"kind":
            "lost_round", "score": "4:4"}``; see :func:`cost_detail`).
        value_lost: match points of the round lost against ``better`` (sampled: on average).
        share: the share of deals in which the move lost value (exact: 1.0); ``deals``: deals solved.
        points_lost: exact only: points lost against the best move for points (a detail).
        method: ``exact``, ``all deals`` (every deal of the unseen cards solved) or ``sampled``.
    """

    round: int
    move: int
    player: str
    hand: tuple[str, ...]
    trick: tuple[str, ...]
    stock: int
    score: tuple[int, int]
    played: str
    better: tuple[str, ...]
    cost: str
    value_lost: float
    share: float
    deals: int
    points_lost: float | None
    method: Method
    cost_detail: dict[str, object] = field(default_factory=dict)

    def position(self) -> str:
        """A one-line description of the position."""
        trick = " ".join(self.trick) if self.trick else "(leading)"
        points = f"{self.score[0]}:{self.score[1]}"
        return f"hand {' '.join(self.hand)}; trick {trick}; stock {self.stock}; points {points}"

    def to_dict(self) -> dict[str, object]:
        """The bad move as a JSON-ready dict (tuples become lists)."""
        out = asdict(self)
        for key in ("hand", "trick", "score", "better"):
            out[key] = list(out[key])
        return out


@dataclass(slots=True)
class PlayerReport:
    """One player's statistics in a match (round counts are those of the player's side)."""

    player: str
    side: int
    rounds_won: int = 0
    won_by_16: int = 0
    won_by_24: int = 0
    won_by_4_and_last: int = 0
    bad_moves: list[BadMove] = field(default_factory=list)

    def stats(self) -> PlayerStats:
        """The four counts the rating takes."""
        return PlayerStats(len(self.bad_moves), self.won_by_16, self.won_by_24, self.won_by_4_and_last)

    def to_dict(self) -> dict[str, object]:
        """The report as a JSON-ready dict: counts, the rating statistics and every bad move."""
        return {
            "player": self.player,
            "side": "ab"[self.side],
            "rounds_won": self.rounds_won,
            "stats": self.stats().to_dict(),
            "bad_moves": [b.to_dict() for b in self.bad_moves],
        }


@dataclass(frozen=True, slots=True)
class MatchAnalysis:
    """Everything derived from one valid record."""

    record: GameRecord
    replay: Replay
    players: tuple[PlayerReport, ...]
    judged_moves: int
    unjudged_moves: int = 0

    @property
    def winner(self) -> Literal["a", "b"]:
        """The match winner's side: ``a`` (seat 0's side) or ``b``."""
        return "a" if self.replay.winner == 0 else "b"

    def to_match(self) -> Match:
        """The rating input (:class:`~sedma_elo.core.model.Match`)."""
        rec = self.record
        team_a = tuple(p.player for p in self.players if p.side == 0)
        team_b = tuple(p.player for p in self.players if p.side == 1)
        played = datetime.fromisoformat(rec.played_at) if rec.played_at else None
        stats = {p.player: p.stats() for p in self.players}
        return Match(team_a, team_b, self.winner, stats, rec.match_id, played)

    def bad_moves(self) -> list[BadMove]:
        """Every bad move of the match, in play order."""
        return sorted((b for p in self.players for b in p.bad_moves), key=lambda b: (b.round, b.move))

    def to_dict(self) -> dict[str, object]:
        """The whole analysis as a JSON-ready dict (``sedma-elo analyze --json --details``).

        Keys: ``match_id``, ``played_at``, ``players`` (ids by seat), ``winner`` (``a``/``b``),
        ``match_points``, ``rounds`` (each round's points, tricks, last-trick side, winner and kind),
        ``judged_moves``, ``unjudged_moves`` (real choices too early in the round to be judged),
        ``reports`` (per player: counts, rating statistics, bad moves) and ``bad_moves`` (all of
        them in play order, see :class:`BadMove`).
        """
        rec = self.record
        rounds = [
            {
                "round": i + 1,
                "points": list(res.points),
                "tricks": list(res.tricks),
                "last_trick": "ab"[res.last_trick_side],
                "winner": "ab"[res.winner],
                "kind": res.kind,
            }
            for i, res in enumerate(self.replay.results)
        ]
        return {
            "match_id": rec.match_id,
            "played_at": rec.played_at,
            "players": list(rec.players),
            "winner": self.winner,
            "match_points": list(self.replay.match_points),
            "rounds": rounds,
            "judged_moves": self.judged_moves,
            "unjudged_moves": self.unjudged_moves,
            "reports": [p.to_dict() for p in self.players],
            "bad_moves": [b.to_dict() for b in self.bad_moves()],
        }

    def to_json(self) -> dict[str, object]:
        """The service's match body: ``match_id, played_at, player_a, player_b, winner, stats.{a,b}``.

        A four-player match gives ``team_a``/``team_b`` lists and ``stats`` keyed by player id.
        """
        rec = self.record
        out: dict[str, object] = {"match_id": rec.match_id, "played_at": rec.played_at}
        if len(self.players) == 2:
            out["player_a"], out["player_b"] = rec.players[0], rec.players[1]
            out["winner"] = self.winner
            out["stats"] = {"ab"[p.side]: p.stats().to_dict() for p in self.players}
        else:
            out["team_a"] = [p.player for p in self.players if p.side == 0]
            out["team_b"] = [p.player for p in self.players if p.side == 1]
            out["winner"] = self.winner
            out["stats"] = {p.player: p.stats().to_dict() for p in self.players}
        return out


def record_seed(record: GameRecord, seed: int = 0) -> int:
    """A 64-bit seed derived from the record's canonical JSON and ``seed``: the same record (and
    ``seed``) always gives the same deals, whoever analyses it."""
    text = json.dumps(record_to_dict(record), sort_keys=True, separators=(",", ":"))
    digest = hashlib.blake2b(f"{seed}:{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _move_seed(base: int, r: int, i: int) -> int:
    digest = hashlib.blake2b(f"{base}:{r}:{i}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


_OUTCOMES = {1: "won", 2: "won_16", 3: "won_24", -1: "lost", -2: "lost_16", -3: "lost_24"}
_OUTCOME_WORDS = {
    "won": "won",
    "won_16": "won as a 16er",
    "won_24": "won as a 24er",
    "lost": "lost",
    "lost_16": "lost (16er against)",
    "lost_24": "lost (24er against)",
}
#: The English of each exact cost kind (``cost_detail["kind"]``); the match page translates them.
COST_WORDS = {
    "lost_round": "turned a won round into a lost one",
    "gave_up_24": "gave up a 24er",
    "gave_up_16": "gave up a 16er",
    "conceded_24": "conceded a 24er",
    "conceded_16": "conceded a 16er",
    "lost_more": "lost more of the round",
}


def _outcome(value: float, stakes: tuple[int, int, int]) -> str:
    """An exact value as an outcome code (``won``, ``won_16``, ``lost_24``, ...) for the mover's side."""
    size = abs(value)
    level = 1 if size == stakes[0] else 2 if size == stakes[1] else 3
    return _OUTCOMES[level if value > 0 else -level]


def cost_detail(v: Verdict, stakes: tuple[int, int, int], score: tuple[int, int]) -> dict[str, object]:
    """What a bad move cost, as a code and its numbers (``BadMove.cost_detail``).

    Exact: ``{"kind", "score"}`` with ``kind`` one of :data:`COST_WORDS`, plus ``got`` and ``best``
    (outcome codes) unless it is the plain case of a plain win turned into a plain loss. Hidden
    cards: ``{"kind": "lost_value", "score", "share"`` (percent), ``"deals", "all_deals"`` (every
    deal solved, not a sample), ``"value"`` (match points lost on average)``}``.
    """
    at = f"{score[0]}:{score[1]}"
    if v.method != "exact":
        return {
            "kind": "lost_value",
            "score": at,
            "share": round(100 * v.share),
            "deals": v.deals,
            "all_deals": v.method == "all deals",
            "value": round(v.value_better - v.value_played, 2),
        }
    best, got = v.value_better, v.value_played
    if best > 0 > got:
        kind = "lost_round"
    elif best > 0:
        kind = "gave_up_24" if best == stakes[2] else "gave_up_16"
    elif got == -stakes[2]:
        kind = "conceded_24"
    elif got == -stakes[1]:
        kind = "conceded_16"
    else:
        kind = "lost_more"
    out: dict[str, object] = {"kind": kind, "score": at}
    if not (kind == "lost_round" and got == -stakes[0] and best == stakes[0]):
        out["got"], out["best"] = _outcome(got, stakes), _outcome(best, stakes)
    return out


def cost_words(detail: dict[str, object]) -> str:
    """A cost detail (:func:`cost_detail`) in English words (``BadMove.cost``)."""
    if detail["kind"] == "lost_value":
        every = "all " if detail["all_deals"] else ""
        return (
            f"lost value in {detail['share']}% of {every}{detail['deals']} deals of the unseen cards"
            f" at {detail['score']}: {float(str(detail['value'])):.2f} match points on average"
        )
    what = f"{COST_WORDS[str(detail['kind'])]} at {detail['score']}"
    if "got" not in detail:
        return what
    return f"{what} ({_OUTCOME_WORDS[str(detail['got'])]} instead of {_OUTCOME_WORDS[str(detail['best'])]})"


def _cards_for(state: RoundState, keys: tuple[int, ...]) -> tuple[str, ...]:
    hand = state.hands[state.to_move]
    out: list[str] = []
    for key in keys:
        if key < 0:
            out.append("stop")
        else:
            out.extend(format_card(c) for c in cards_of(hand & rank_mask(key)))
    return tuple(out)


def _choice(state: RoundState) -> bool:
    moves = state.legal_moves()
    return len({-1 if m == STOP else m >> 2 for m in moves}) > 1


def analyze(
    record: GameRecord,
    config: AnalysisConfig | None = None,
    solver: Solver | None = None,
    progress: Callable[[int, int], None] | None = None,
    values: ValueSolver | None = None,
) -> MatchAnalysis:
    """Validate ``record`` by replaying it, then derive each player's statistics and bad moves.

    Raises :class:`~sedma_elo.errors.GameRecordError` (before anything is judged) when the record is
    invalid. ``progress(done, total)`` is called after each round. ``solver`` (points, for the
    detail) and ``values`` (the value search) may be shared between calls.
    """
    config = config or AnalysisConfig()
    solver = solver or Solver()
    values = values or ValueSolver()
    rep = replay(record)
    rules: GameRules = record.rules
    stakes = stakes_of(rules)
    limit = config.stock_limit(rules.players)
    base = record_seed(record, config.seed)
    reports = tuple(PlayerReport(pid, seat % 2) for seat, pid in enumerate(record.players))
    for res in rep.results:
        for rp in reports:
            if rp.side != res.winner:
                continue
            rp.rounds_won += 1
            rp.won_by_16 += res.counts_as_16(rules)
            rp.won_by_24 += res.kind == "24"
            rp.won_by_4_and_last += res.kind == "4_and_last"
    judged = unjudged = 0
    trick_order: list[int] = []
    current_round = 0
    for r, i, state, mv in iter_positions(record):
        if r != current_round and progress is not None:
            progress(current_round + 1, len(record.rounds))
        current_round = r
        if state.led < 0:
            trick_order = []
        if config.judge != "none" and _choice(state):
            verdict: Verdict | None = None
            if state.n == 2 and state.pos >= 32:
                verdict = judge_exact(state, mv.move, stakes, values, solver)
            elif config.judge == "all" and state.stock_size <= limit:
                verdict = judge_sampled(
                    state,
                    mv.move,
                    stakes,
                    values,
                    _move_seed(base, r, i),
                    share=config.share,
                    confidence=config.confidence,
                    min_deals=config.min_deals,
                    max_deals=config.max_deals,
                    max_listed=config.max_listed,
                    max_listed_close=config.max_listed_close,
                )
            else:
                unjudged += 1
            if verdict is not None:
                judged += 1
                if verdict.bad:
                    side = mv.player & 1
                    score = (state.points(side), state.points(1 - side))
                    detail = cost_detail(verdict, stakes, score)
                    reports[mv.player].bad_moves.append(
                        BadMove(
                            round=r + 1,
                            move=i + 1,
                            player=record.players[mv.player],
                            hand=tuple(format_card(c) for c in cards_of(state.hands[mv.player])),
                            trick=tuple(format_card(c) for c in trick_order),
                            stock=state.stock_size,
                            score=score,
                            played=format_move(mv.move),
                            better=_cards_for(state, verdict.better),
                            cost=cost_words(detail),
                            cost_detail=detail,
                            value_lost=round(verdict.value_better - verdict.value_played, 3),
                            share=round(verdict.share, 3),
                            deals=verdict.deals,
                            points_lost=verdict.points_lost,
                            method=verdict.method,
                        )
                    )
        if mv.move != STOP:
            trick_order.append(mv.move)
    if progress is not None:
        progress(len(record.rounds), len(record.rounds))
    return MatchAnalysis(record, rep, reports, judged, unjudged)
