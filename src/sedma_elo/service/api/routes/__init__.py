"""One router per API area: matches, games, players, leaderboard, changes, versions, admin, webhooks, meta."""

from . import admin, changes, games, leaderboard, matches, meta, players, versions, webhooks

__all__ = ["ROUTERS"]

#: Every router of the JSON API, in the order the OpenAPI document lists their areas.
ROUTERS = (
    matches.router,
    games.router,
    players.router,
    leaderboard.router,
    changes.router,
    versions.router,
    admin.router,
    webhooks.router,
    meta.router,
)
