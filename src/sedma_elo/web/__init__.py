"""The web pages of the rating service: leaderboard, player profiles and match explanations.

``router`` is a FastAPI router that the service's app factory includes; the pages read through the
service layer stored on ``app.state.service``, the same one the JSON API uses.
"""

from .pages import router

__all__ = ["router"]
