"""A stand-in for the service's ``Ledger`` (same method names and answer shapes) while it lands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sedma_elo import REFERENCE_RULES, Match, NotFoundError, PlayerStats, Rules, rate
from sedma_elo.explain import change_to_dict

NO_STATS = PlayerStats()


@dataclass(frozen=True)
class Version:
    id: int
    rules: Rules


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    next_cursor: str | None
    version_id: int


class FakeLedger:
    def __init__(self) -> None:
        self.ratings: dict[str, int] = {}
        self.played: dict[str, int] = {}
        self.matches: dict[str, dict[str, Any]] = {}
        self.history: dict[str, list[dict[str, Any]]] = {}

    def active_version(self) -> Version:
        return Version(1, REFERENCE_RULES)

    def post(
        self,
        match_id: str,
        a: str,
        b: str,
        winner: str,
        sa: PlayerStats = NO_STATS,
        sb: PlayerStats = NO_STATS,
        played_at: str | None = None,
    ) -> None:
        m = Match.single(a, b, winner, sa, sb, match_id=match_id)  # type: ignore[arg-type]
        res = rate(m, self.ratings)
        seq = len(self.matches) + 1
        body = {"match_id": match_id, "played_at": played_at, "player_a": a, "player_b": b, "winner": winner}
        body["stats"] = {"a": sa.to_dict(), "b": sb.to_dict()}
        self.matches[match_id] = {
            "match_id": match_id,
            "sequence": seq,
            "played_at": played_at,
            "voided": False,
            "void_reason": None,
            "match": body,
            "ratings_version": {"id": 1, "label": "reference", "rules": REFERENCE_RULES.label},
            "changes": [change_to_dict(res, c.player_id) for c in res.changes],
        }
        for c in res.changes:
            self.ratings[c.player_id] = c.rating_after
            self.played[c.player_id] = self.played.get(c.player_id, 0) + 1
            self.history.setdefault(c.player_id, []).append(
                {
                    "sequence": seq,
                    "match_id": match_id,
                    "played_at": played_at,
                    "rating_before": c.rating_before,
                    "rating_after": c.rating_after,
                    "delta": c.delta,
                }
            )

    def _order(self) -> list[str]:
        return sorted(self.ratings, key=lambda p: (-self.ratings[p], p))

    def leaderboard(self, limit: int = 50, cursor: str | None = None, version_id: int | None = None) -> Page:
        order = self._order()
        start = int(cursor) if cursor else 0
        items = [
            {"rank": i + 1, "player_id": p, "rating": self.ratings[p], "matches_played": self.played[p]}
            for i, p in enumerate(order)
            if start <= i < start + limit
        ]
        return Page(items, str(start + limit) if start + limit < len(order) else None, 1)

    def around(self, player_id: str, span: int = 5) -> Page:
        if player_id not in self.ratings:
            raise NotFoundError(player_id)
        rank = self._order().index(player_id) + 1
        item = {"rank": rank, "player_id": player_id, "rating": self.ratings[player_id]}
        return Page([item | {"matches_played": self.played[player_id]}], None, 1)

    def get_player(self, player_id: str, version_id: int | None = None) -> dict[str, Any]:
        if player_id not in self.ratings:
            raise NotFoundError(player_id)
        return {
            "player_id": player_id,
            "rating": self.ratings[player_id],
            "matches_played": self.played[player_id],
        }

    def player_history(self, player_id: str, limit: int = 50, cursor: str | None = None) -> Page:
        if player_id not in self.ratings:
            raise NotFoundError(player_id)
        items = self.history[player_id]
        start = int(cursor) if cursor else 0
        nxt = str(start + limit) if start + limit < len(items) else None
        return Page(items[start : start + limit], nxt, 1)

    def get_match(self, match_id: str) -> dict[str, Any]:
        if match_id not in self.matches:
            raise NotFoundError(match_id)
        return self.matches[match_id]
