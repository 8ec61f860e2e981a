"""One router per API area: matches, games, players, leaderboard, versions, admin and meta (health)."""

from . import admin, games, leaderboard, matches, meta, players, versions

__all__ = ["ROUTERS"]

#: Every router of the JSON API, in the order the OpenAPI document lists their areas.
ROUTERS = (
    matches.router,
    games.router,
    players.router,
    leaderboard.router,
    versions.router,
    admin.router,
    meta.router,
)
