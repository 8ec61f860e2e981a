"""A history file's matches as the columns the bulk import stores, with what POST would store for each.

:func:`import_rows` turns what :func:`~sedma_elo.batch.history.read_lined` read into
:class:`ImportRows`: the ledger's facts of every match (players, counts, winner, canonical
``played_at``) and the SHA-256 of its canonical body, built directly from the columns for a
one-against-one file (:func:`canonical_texts`, equal byte for byte to the text of
:mod:`sedma_elo.service.payload`) and through :func:`~sedma_elo.service.payload.submission_from_match`
for team matches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from ...batch.history import HistoryArrays, LinedMatches
from ...core._jsontext import json_string
from ...errors import HistoryError, SedmaEloError, ValidationError
from ..payload import one_on_one_text, stats_text, submission_from_match, time_text

__all__ = ["ImportRows", "canonical_texts", "import_rows", "located"]

_WINNERS = ("a", "b", "draw")


def located(exc: SedmaEloError, line: int | None) -> HistoryError:
    """``exc`` (refusing one match) as the history error of its line."""
    if isinstance(exc, ValidationError):
        return HistoryError(exc.field, exc.reason, line=line)
    return HistoryError("match", str(exc), line=line)


@dataclass(eq=False)
class ImportRows:
    """A file's matches as columns, each with what POST would store for it.

    ``slots`` holds each match's players as indexes into ``player_ids`` in the slots ``a1, a2, b1,
    b2`` (-1 for the empty slot of a one-against-one match); ``counts`` their four counts a slot in
    the order of :data:`~.rows.STAT_COLUMNS`; ``played_at`` the canonical time text and ``hashes``
    the SHA-256 of the canonical body.
    """

    player_ids: Sequence[str]
    slots: npt.NDArray[np.int32]
    counts: npt.NDArray[np.int32]
    winner: npt.NDArray[np.int8]
    match_ids: list[str]
    played_at: list[str | None]
    hashes: list[bytes]
    lines: list[int]

    def __len__(self) -> int:
        return len(self.match_ids)

    def take(self, keep: npt.NDArray[np.bool_]) -> ImportRows:
        """The rows where ``keep`` is true (the same players)."""
        idx = np.flatnonzero(keep).tolist()
        return ImportRows(
            self.player_ids,
            self.slots[keep],
            self.counts[keep],
            self.winner[keep],
            [self.match_ids[i] for i in idx],
            [self.played_at[i] for i in idx],
            [self.hashes[i] for i in idx],
            [self.lines[i] for i in idx],
        )


def _canonical_time(text: str) -> str | None:
    """A file's ``played_at`` text as the ledger stores it (a naive time is UTC, as for POST)."""
    if not text:
        return None
    when = datetime.fromisoformat(text)
    return time_text(when if when.tzinfo is not None else when.replace(tzinfo=UTC))


def canonical_texts(h: HistoryArrays) -> tuple[list[str | None], list[str]]:
    """Each match's canonical ``played_at`` and canonical body text (what POST hashes), built directly.

    Equal, byte for byte, to ``canonical_json(canonical_body(match, played_at))`` of
    :mod:`sedma_elo.service.payload` (tested): the keys in sorted order, ``json.dumps``'s escapes.
    """
    times = {text: _canonical_time(text) for text in set(h.played_at)}
    time_json = {text: json.dumps(value) for text, value in times.items()}
    names = [json_string(p) for p in h.player_ids]
    stats: dict[tuple[int, int, int, int], str] = {}

    winners = [json_string(w) for w in _WINNERS]

    def stats_json(key: tuple[int, int, int, int]) -> str:
        found = stats.get(key)
        if found is None:
            found = stats[key] = stats_text(*key)
        return found

    bodies = []
    for mid, when, a, b, w, c in zip(
        h.match_ids,
        h.played_at,
        h.player_a.tolist(),
        h.player_b.tolist(),
        h.winner.tolist(),
        h.counts.tolist(),
        strict=True,
    ):
        bodies.append(
            one_on_one_text(
                json_string(mid),
                time_json[when],
                names[a],
                names[b],
                stats_json((c[0], c[2], c[4], c[6])),
                stats_json((c[1], c[3], c[5], c[7])),
                winners[w],
            )
        )
    return [times[t] for t in h.played_at], bodies


def import_rows(source: HistoryArrays | LinedMatches) -> ImportRows:
    """The :class:`ImportRows` of a history read by :func:`~sedma_elo.batch.history.read_lined`.

    Raises:
        HistoryError: a match POST would refuse (the field and line named), e.g. no ``match_id``.
    """
    if isinstance(source, HistoryArrays):
        for i, mid in enumerate(source.match_ids):
            if not mid:
                raise HistoryError("match_id", "is required", line=int(source.lines[i]))
        played, bodies = canonical_texts(source)
        n = len(source)
        slots = np.full((n, 4), -1, dtype=np.int32)
        slots[:, 0], slots[:, 2] = source.player_a, source.player_b
        counts = np.zeros((n, 16), dtype=np.int32)
        counts[:, 0:4] = source.counts[:, 0::2]  # a: bad, 16, 24, 4-and-last
        counts[:, 8:12] = source.counts[:, 1::2]
        return ImportRows(
            source.player_ids,
            slots,
            counts,
            source.winner.astype(np.int8),
            source.match_ids,
            played,
            [hashlib.sha256(b.encode()).digest() for b in bodies],
            source.lines.tolist(),
        )
    return _rows_of_matches(source)


def _rows_of_matches(source: LinedMatches) -> ImportRows:
    """Team matches: each through :func:`submission_from_match`, the importer's form of POST."""
    index: dict[str, int] = {}
    n = len(source.matches)
    slots = np.full((n, 4), -1, dtype=np.int32)
    counts = np.zeros((n, 16), dtype=np.int32)
    winner = np.empty(n, dtype=np.int8)
    ids, played, hashes = [], [], []
    for i, (match, line) in enumerate(zip(source.matches, source.lines, strict=True)):
        try:
            sub = submission_from_match(match)
        except SedmaEloError as exc:
            raise located(exc, line) from None
        team_a, team_b = match.team_a, match.team_b
        pairs = [(team_a[0], 0), (team_b[0], 2)]
        if len(team_a) == 2:
            pairs += [(team_a[1], 1), (team_b[1], 3)]
        for pid, slot in pairs:
            slots[i, slot] = index.setdefault(pid, len(index))
            counts[i, 4 * slot : 4 * slot + 4] = match.stats_of(pid).key()
        winner[i] = _WINNERS.index(match.winner)
        ids.append(sub.match_id)
        played.append(sub.played_at)
        hashes.append(bytes.fromhex(sub.body_hash))
    return ImportRows(list(index), slots, counts, winner, ids, played, hashes, list(source.lines))
