"""The documented shapes of the change feed and of the webhook admin routes (pydantic models).

The routes answer pre-built JSON text (the feed's items are stored as text); these models are what
``/openapi.json`` shows, and what the tests check the answers against. The answers' models are
closed (:class:`~.responses.Answer`), as every other answer's.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..webhooks.subscriptions import MAX_SECRET, MAX_URL
from .responses import Answer
from .schemas import NO_CONTROL_CHARS

__all__ = [
    "ChangeItem",
    "ChangesOut",
    "MatchChange",
    "PlayerChange",
    "RerateChange",
    "VoidChange",
    "WebhookIn",
    "WebhookOut",
    "WebhooksOut",
]


class PlayerChange(Answer):
    """One player's rating before and after (null after: no rated match left, after a void)."""

    player_id: str
    rating_before: int
    rating_after: int | None
    delta: int | None


class MatchChange(Answer):
    """A match was applied: each of its players' rating before and after it."""

    sequence: int = Field(description="position in the feed (the cursor; dense, in commit order)")
    kind: Literal["match"]
    version_id: int = Field(description="the active ratings version the match was rated in")
    match_id: str
    match_sequence: int = Field(description="the match's position in the ledger")
    played_at: str | None
    players: list[PlayerChange]
    created_at: str


class VoidChange(Answer):
    """A match was voided: every player whose current rating changed with it (the voided match's
    players and everyone rated after them)."""

    sequence: int
    kind: Literal["void"]
    version_id: int
    match_id: str
    match_sequence: int
    played_at: str | None
    reason: str | None
    players: list[PlayerChange] = Field(description="current rating before the void and after it")
    created_at: str


class RerateChange(Answer):
    """Another ratings version became the active one: every rating may have changed."""

    sequence: int
    kind: Literal["rerate"]
    version_id: int = Field(description="the version active from now on")
    previous_version_id: int
    label: str
    rules: str
    created_at: str


ChangeItem = Annotated[MatchChange | VoidChange | RerateChange, Field(discriminator="kind")]


class ChangesOut(Answer):
    """A page of the change feed."""

    items: list[ChangeItem]
    next_after: int | None = Field(description="``after`` of the next page; null: nothing more now")
    poll_after: int = Field(description="``after`` to poll with later (the last item's sequence)")


class WebhookIn(BaseModel):
    """A webhook subscription to register."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(max_length=MAX_URL, description="http:// or https:// URL that receives POSTs")
    secret: str = Field(
        description="signs every delivery (HMAC-SHA256); 16 to 200 characters", max_length=MAX_SECRET
    )
    label: str = Field("", max_length=200, pattern=NO_CONTROL_CHARS)
    after: int | None = Field(
        None,
        ge=0,
        le=2**63 - 1,
        description="deliver items after this sequence (default: from now on; 0: all)",
    )


class WebhookOut(Answer):
    """A subscription (never its secret) and its delivery state."""

    id: int
    url: str
    label: str
    created_at: str
    delivered_through: int = Field(description="the last sequence delivered")
    backlog: int = Field(description="items still to deliver")
    attempts: int = Field(description="failed attempts in a row at the next item")
    next_attempt_at: float = Field(description="Unix time of the next attempt after a failure")
    last_error: str | None


class WebhooksOut(Answer):
    """Every subscription."""

    items: list[WebhookOut]
