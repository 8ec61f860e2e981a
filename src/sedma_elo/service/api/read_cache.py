"""The hot reads' answers (``GET /v1/leaderboard``, ``GET /v1/players/{id}``), kept until the ledger changes.

:class:`ReadCache` sits in front of FastAPI's stack like the direct write route: a request whose
exact path and query string it has answered before, with the ledger unchanged since, gets the same
bytes back without FastAPI's middleware, router, validation, SQL or JSON (with an ``ETag``, and a
304 to ``If-None-Match``). Anything else goes through the normal stack, and a 200 answer is kept.

Freshness. Every applied match, void and switch of the active version writes a ``change_events``
row in its own transaction (:mod:`sedma_elo.service.ledger.feed_events`), so the feed's head
sequence names the ledger's state: answers are kept under the head they were computed at. When
the head moves by at most :attr:`ReadCache.MAX_EVENTS` ``match`` events in the same active
version, the events are read and only the answers they can make stale are dropped (the players
they rated, the leaderboard pages their old or new places fall in: :mod:`.kept_reads`); after
anything else (a void, a re-rate, a switch, a longer run of events) all are dropped. The head is
read again (one index probe, with the
active version's id) when

* this process has committed a change since the last read (:attr:`LedgerBase.commits
  <sedma_elo.service.ledger.base.LedgerBase.commits>`, bumped after the commit and before the
  writer answers): a client never reads, from the process that took its write, an answer older
  than that write;
* ``seconds`` have passed: a change committed by another process (``serve --workers``, a CLI
  ``import`` or ``void``) is seen within ``seconds`` (0: the head is read on every request, and
  no process serves anything older than the last commit).

An answer is kept only if the head did not move (and this process committed nothing) while it was
computed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...core.ids import MAX_ID_LENGTH, id_problem, normalize_id
from ..ledger import Ledger
from ..observability.middleware import Observe
from ..observability.request_id import HEADER as REQUEST_ID
from .kept_reads import KeptReads, Moved, moves
from .routes.players import player_body

__all__ = ["ReadCache"]

_LEADERBOARD = "/v1/leaderboard"
_PLAYER = "/v1/players/"
_NOT_MODIFIED = 304
#: (feed head sequence, active version id): the state of the ledger the kept answers belong to.
_Head = tuple[int, int | None]


@dataclass(frozen=True, slots=True)
class _Answer:
    """A kept 200 answer: its headers (``ETag`` included, no request id), body and entity tag."""

    headers: list[tuple[bytes, bytes]]
    body: bytes
    etag: bytes


def _template(path: str) -> str | None:
    """The route template of a cached read's path, or ``None`` for any other path."""
    if path == _LEADERBOARD:
        return _LEADERBOARD
    if path.startswith(_PLAYER) and "/" not in path[len(_PLAYER) :] and len(path) > len(_PLAYER):
        return "/v1/players/{player_id}"
    return None


def _if_none_match(scope: Scope) -> bytes | None:
    for name, value in scope["headers"]:
        if name == b"if-none-match":
            return bytes(value)
    return None


def _matches(tags: bytes | None, etag: bytes) -> bool:
    """Whether an ``If-None-Match`` value names ``etag`` (or is ``*``)."""
    if tags is None:
        return False
    return any(t.strip().removeprefix(b"W/") in (etag, b"*") for t in tags.split(b","))


def _covers(base: _Head | None, kept_at: _Head | None, fresh: _Head) -> bool:
    """Whether the events from ``base`` to ``fresh`` include all from ``kept_at`` to ``fresh``."""
    if base is None or kept_at is None or kept_at[1] != fresh[1]:
        return False
    return base[0] <= kept_at[0] <= fresh[0]


class ReadCache:
    """Serve the hot reads of ``ledger`` from kept answers (see the module docstring for freshness).

    At most ``size`` answers are kept (the oldest dropped first); ``seconds`` bounds how long a
    change made by another process may go unseen. Hits are observed (request id, metrics, access
    log) as the FastAPI stack observes the rest.
    """

    #: The most feed events read to drop only what they changed; past that, everything is dropped
    #: (reading and parsing them would cost more than computing the answers again).
    MAX_EVENTS = 1000

    def __init__(
        self,
        ledger: Ledger,
        *,
        size: int,
        seconds: float,
        provisional_matches: int,
        metrics: bool = True,
        access_log: bool = False,
    ) -> None:
        self.ledger = ledger
        self.size = size
        self.seconds = seconds
        self.provisional_matches = provisional_matches
        self._answers: KeptReads[_Answer] = KeptReads(size)
        self._head: tuple[int, int | None] | None = None  # (feed head, active version) of _answers
        self._seen_commits = -1  # ledger.commits when the head was last read
        self._expires = 0.0
        self._tickets = 0  # head reads started; the answer of an older one never replaces a newer
        self._applied = 0
        self._observed = {
            t: Observe(self._send_kept, metrics=metrics, access_log=access_log, route=t)
            for t in (_LEADERBOARD, "/v1/players/{player_id}")
        }

    def handles(self, scope: Scope) -> bool:
        """Whether ``scope`` is a request this cache answers or keeps (a GET of a cached read)."""
        return scope["type"] == "http" and scope["method"] == "GET" and _template(scope["path"]) is not None

    async def serve(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        """Answer from a kept answer, or through ``app`` (keeping a 200 answer)."""
        head = await self._current_head()
        key = (scope["path"], scope["query_string"])
        kept = self._answers.get(key)
        if kept is not None:
            scope["sedma_elo.kept"] = kept
            await self._observed[_template(scope["path"]) or _LEADERBOARD](scope, receive, send)
            return
        changes = self.ledger.commits
        if not scope["query_string"] and _template(scope["path"]) != _LEADERBOARD:
            body = await self._player_body(scope["path"][len(_PLAYER) :])
            if body is not None:
                scope["sedma_elo.computed"] = (key, head, changes, body)
                await self._observed["/v1/players/{player_id}"](scope, receive, send)
                return
        await app(scope, receive, self._keeping(scope, send, key, head, changes))

    async def _player_body(self, player_id: str) -> bytes | None:
        """The body of a found player's answer, read here without FastAPI's stack (a miss's cost).

        ``None`` (FastAPI's route answers: its validation, errors and 404) unless ``player_id`` is
        an id in normal form that the active version rates.
        """
        if len(player_id) > MAX_ID_LENGTH or id_problem(player_id) is not None:
            return None
        if normalize_id(player_id) != player_id:
            return None
        try:
            record = await self.ledger.get_player_async(player_id)
        except Exception:  # unknown player, or a database fault: the route's error mapping answers
            return None
        return player_body(record, self.provisional_matches)

    async def _send_kept(self, scope: Scope, receive: Receive, send: Send) -> None:
        computed = scope.get("sedma_elo.computed")
        if computed is not None:  # a player answer read by _player_body: kept as FastAPI's would be
            key, head, changes, body = computed
            keeping = self._keeping(scope, send, key, head, changes)
            headers = [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
            await keeping({"type": "http.response.start", "status": 200, "headers": headers})
            await keeping({"type": "http.response.body", "body": body})
            return
        kept: _Answer = scope["sedma_elo.kept"]
        if _matches(_if_none_match(scope), kept.etag):
            headers = [(b"etag", kept.etag)]
            await send({"type": "http.response.start", "status": _NOT_MODIFIED, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": kept.headers})
        await send({"type": "http.response.body", "body": kept.body})

    def _keeping(
        self, scope: Scope, send: Send, key: tuple[str, bytes], head: tuple[int, int | None], changes: int
    ) -> Callable[[Message], Awaitable[None]]:
        """``send`` that also keeps a whole 200 answer computed at ``head`` (adding its ETag)."""
        start: Message | None = None

        async def send_keeping(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] == 200:
                start = message  # held until the body is known: its ETag goes in the headers
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            held, start = start, None
            if message.get("more_body", False):  # a streamed answer: passed on, not kept
                await send(held)
                await send(message)
                return
            body = bytes(message.get("body", b""))
            etag = b'"' + hashlib.blake2b(body, digest_size=12).hexdigest().encode("ascii") + b'"'
            headers = [*held.get("headers", ()), (b"etag", etag)]
            kept = _Answer([h for h in headers if h[0] != REQUEST_ID], body, etag)
            if head == self._head and changes == self.ledger.commits:
                self._answers.keep(key, kept, body)
            if _matches(_if_none_match(scope), etag):
                await send(
                    {
                        **held,
                        "status": _NOT_MODIFIED,
                        "headers": [(n, v) for n, v in headers if n != b"content-length"],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
            await send({**held, "headers": headers})
            await send(message)

        return send_keeping

    async def _current_head(self) -> tuple[int, int | None]:
        """The head the kept answers belong to, read again when it may have moved (see module doc)."""
        head = self._head
        if (
            head is not None
            and self._seen_commits == self.ledger.commits
            and time.monotonic() < self._expires
        ):
            return head
        self._tickets += 1
        ticket = self._tickets
        changes = self.ledger.commits  # read before the head: a commit during the read is caught next time
        started = time.monotonic()
        fresh = await self.ledger.read_head_async()
        base = self._head
        moved: list[Moved] | None = None
        if base is not None and base[1] == fresh[1] and 0 < fresh[0] - base[0] <= self.MAX_EVENTS:
            moved = moves(await self.ledger.read_events_async(base[0], fresh[0]))
        if ticket > self._applied:
            self._applied = ticket
            kept_at = self._head
            if fresh != kept_at:
                # The events after ``base`` cover those after ``kept_at`` (base <= kept_at): another
                # ticket may have moved the head since this one read it.
                if moved is not None and _covers(base, kept_at, fresh):
                    self._answers.drop(moved)
                else:
                    self._answers.clear()
                self._head = fresh
            self._seen_commits = changes
            self._expires = started + self.seconds
        return fresh
