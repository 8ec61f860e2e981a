"""The answer a repeated ``POST /v1/matches`` gets, derived from the stored facts instead of stored text.

The first answer of a match is a function of facts the ledger keeps anyway: the match (decoded by
:mod:`.rows`), its sequence, the version it was applied in (``matches.version_id``: its id, label
and rules), and each player's rating and games played before the match in that version (the
match's ``rating_changes`` rows and how many rows each player has before it). :func:`derive_answer`
recomputes it with the one fold, byte for byte what the live path answered; :func:`repeat_answers`
does so for all the repeats of a write batch at once, in two statements whatever their number.

Two facts change that derivation afterwards, and both are handled here:

* a void: the voided match answers its voided view (no changes, the version active at the void,
  which :meth:`void <.versions.VersionsMixin.void>` writes to ``version_id``);
* a void's rebuild of a version changes the ratings (or games played) before later matches of that
  version: :func:`keep_answers` stores their answer text in ``kept_answers`` before the rebuild and
  :func:`drop_derivable` deletes again the ones the rebuilt facts still derive. Only a void does
  this; a re-rate writes a new version and leaves the old one's rows as they were.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from ...core.fold import RatingState
from ..payload import Submission
from .rows import MATCH_COLUMNS, MATCH_FROM, submission_of
from .types import VersionInfo
from .views import match_view, response_text, view_text

__all__ = [
    "Standings",
    "StandingsOf",
    "derive_answer",
    "derive_answers",
    "drop_derivable",
    "keep_answers",
    "repeat_answers",
    "standing_before",
]

#: A version by id (:meth:`LedgerBase._version_raw` bound to the connection's ledger).
VersionOf = Callable[[Any, int], VersionInfo]

_FACTS = (
    f"SELECT {MATCH_COLUMNS}, m.voided, m.void_reason, m.version_id, k.response FROM {MATCH_FROM}"
    " LEFT JOIN kept_answers k ON k.sequence = m.sequence WHERE m.sequence IN ({marks})"
)
# Each player's rating before the match and games played before it, in the match's version.
_BEFORE = (
    "SELECT rc.sequence, p.player_id, rc.rating_before, (SELECT count(*) FROM rating_changes r2"
    " WHERE r2.version_id = rc.version_id AND r2.player_key = rc.player_key"
    " AND r2.sequence < rc.sequence) FROM rating_changes rc JOIN players p ON p.id = rc.player_key"
    " WHERE rc.version_id = {ph} AND rc.sequence = {ph}"
)
# The same for several matches, each in the version it was applied in.
_BEFORE_MANY = (
    "SELECT rc.sequence, p.player_id, rc.rating_before, (SELECT count(*) FROM rating_changes r2"
    " WHERE r2.version_id = rc.version_id AND r2.player_key = rc.player_key"
    " AND r2.sequence < rc.sequence) FROM matches m JOIN rating_changes rc"
    " ON rc.version_id = m.version_id AND rc.sequence = m.sequence"
    " JOIN players p ON p.id = rc.player_key WHERE m.sequence IN ({marks})"
)
#: Matches per chunk when keeping answers around a void.
_CHUNK = 500

#: Per match sequence: each player's rating before it and games played before it.
Standings = dict[int, tuple[dict[str, int], dict[str, int]]]
#: ``(version_id, sequences)``: the standings before these matches of a version, or None when the
#: caller does not hold them (then they are read: a ``count(*)`` per player per match).
StandingsOf = Callable[[int, list[int]], Standings | None]


def derive_answer(raw: Any, ph: str, version_of: VersionOf, sequence: int, *, kept: bool = True) -> str:
    """The answer text of the stored match ``sequence``: what its first ``POST`` got (or, voided,
    its voided view). ``raw`` is a DBAPI connection (sqlite3 or psycopg), ``ph`` its placeholder;
    with ``kept=False`` a kept answer text is ignored (what the facts alone derive).

    Raises:
        LookupError: no match has this sequence, or its version holds no rating change for it.
    """
    row = raw.execute(_FACTS.format(marks=ph), (sequence,)).fetchone()
    if row is None:
        raise LookupError(f"no match has sequence {sequence}")
    version_id = int(row[-2])
    standing = {sequence: standing_before(raw, ph, version_id, sequence)}
    return _answer(row, standing, version_of, raw, kept)


def derive_answers(
    raw: Any,
    ph: str,
    version_of: VersionOf,
    sequences: Collection[int],
    *,
    kept: bool = True,
    standings_of: StandingsOf | None = None,
) -> dict[int, str]:
    """:func:`derive_answer` of several stored matches (``kept``: kept texts used), in two
    statements whatever their number: what a batch of repeats needs, one round trip each on
    PostgreSQL, and what a void's :func:`keep_answers` and :func:`drop_derivable` derive by chunks.
    ``standings_of`` gives the standings the caller holds (a void's rebuild: from its arrays).

    Raises:
        LookupError: one of ``sequences`` is no stored match, or its version holds no rating
            change for it.
    """
    wanted = sorted(set(sequences))
    if not wanted:
        return {}
    marks = ", ".join([ph] * len(wanted))
    rows = raw.execute(_FACTS.format(marks=marks), wanted).fetchall()
    standings: Standings = {seq: ({}, {}) for seq in wanted}
    by_version: dict[int, list[int]] = {}
    for row in rows:
        if not row[-4]:  # a voided match's answer needs no standing
            by_version.setdefault(int(row[-2]), []).append(int(row[0]))
    unknown = []
    for version_id, seqs in by_version.items():
        held = standings_of(version_id, seqs) if standings_of is not None else None
        if held is None:
            unknown += seqs
        else:
            standings.update(held)
    marks = ", ".join([ph] * len(unknown))
    found = raw.execute(_BEFORE_MANY.format(marks=marks), unknown).fetchall() if unknown else []
    for seq, pid, rating, count in found:
        before, games = standings[int(seq)]
        before[pid] = rating
        games[pid] = int(count)
    texts = {int(row[0]): _answer(row, standings, version_of, raw, kept) for row in rows}
    if missing := set(wanted) - set(texts):
        raise LookupError(f"no match has sequence {min(missing)}")
    return texts


def repeat_answers(
    raw: Any, ph: str, version_of: VersionOf, subs: Iterable[Submission], stored: dict[str, tuple[str, int]]
) -> Callable[[int], str]:
    """The ``answer`` of a :class:`~.batch.Batch`: the answers of all the batch's repeats of stored
    matches (``stored``: match id to body hash and sequence) derived together on the first ask."""
    repeats = [seen[1] for sub in subs if (seen := stored.get(sub.match_id)) and seen[0] == sub.body_hash]
    texts: dict[int, str] = {}

    def answer(sequence: int) -> str:
        if not texts:
            texts.update(derive_answers(raw, ph, version_of, repeats))
        return texts[sequence] if sequence in texts else derive_answer(raw, ph, version_of, sequence)

    return answer


def _answer(row: Any, standings: Standings, version_of: VersionOf, raw: Any, kept: bool) -> str:
    """The answer text of one ``_FACTS`` row, given the standings before each match."""
    voided, reason, version_id, text = row[-4:]
    if kept and text is not None and not voided:
        return str(text)
    seq, sub = submission_of(row)
    version = version_of(raw, int(version_id))
    if voided:
        view = match_view(json.loads(sub.body), seq, sub.played_at, version, None, True, reason)
        return view_text(view)
    before, games = standings.get(seq, ({}, {}))
    if set(before) != set(sub.match.players):
        raise LookupError(f"version {version.id} holds no rating changes for sequence {seq}")
    result = RatingState(before, games).rate(sub.match, version.rules)
    return response_text(sub, seq, version, result)


def standing_before(
    raw: Any, ph: str, version_id: int, sequence: int
) -> tuple[dict[str, int], dict[str, int]]:
    """Each player's rating before the match ``sequence`` and games played before it, in a version
    (empty for a match the version did not rate): what the writer knew when it rated the match."""
    before: dict[str, int] = {}
    games: dict[str, int] = {}
    for _, pid, rating, count in raw.execute(_BEFORE.format(ph=ph), (version_id, sequence)).fetchall():
        before[pid] = rating
        games[pid] = int(count)
    return before, games


def _candidates(
    raw: Any, ph: str, version_ids: list[int], after: int, only: Collection[int] | None
) -> Iterator[list[int]]:
    """Chunks of the non-voided matches after ``after`` applied in one of ``version_ids`` (with
    ``only``: among these sequences)."""
    marks = ", ".join([ph] * len(version_ids))
    if only is not None:
        # By the sequences themselves: the keyset query below ran as a sequential scan per chunk
        # on PostgreSQL (no statistics yet after an import: 120 ms a chunk, 180 s for a void).
        wanted = sorted(seq for seq in only if seq > after)
        for start in range(0, len(wanted), _CHUNK):
            part = wanted[start : start + _CHUNK]
            found = raw.execute(
                f"SELECT sequence FROM matches WHERE sequence IN ({', '.join([ph] * len(part))})"
                f" AND NOT voided AND version_id IN ({marks})",
                (*part, *version_ids),
            ).fetchall()
            if found:
                yield sorted(int(r[0]) for r in found)
        return
    last = after
    while True:
        rows = raw.execute(
            f"SELECT sequence FROM matches WHERE sequence > {ph} AND NOT voided"
            f" AND version_id IN ({marks}) ORDER BY sequence LIMIT {_CHUNK}",
            (last, *version_ids),
        ).fetchall()
        if not rows:
            return
        chunk = [int(r[0]) for r in rows]
        yield chunk
        last = chunk[-1]


def keep_answers(
    raw: Any,
    ph: str,
    version_of: VersionOf,
    version_ids: list[int],
    after: int,
    only: Collection[int] | None = None,
    standings_of: StandingsOf | None = None,
) -> None:
    """Before a rebuild of ``version_ids`` from ``after`` on: keep the answer text of every later
    match applied in one of them (those kept already stay as they are); with ``only``, of those
    among these sequences (the caller knows the others derive the same answer after the rebuild).
    ``standings_of``: the standings before the rebuild, as the caller holds them."""
    if not version_ids:
        return
    for chunk in _candidates(raw, ph, version_ids, after, only):
        marks = ", ".join([ph] * len(chunk))
        sql = f"SELECT sequence FROM kept_answers WHERE sequence IN ({marks})"
        kept = {int(r[0]) for r in raw.execute(sql, chunk).fetchall()}
        # One derivation per chunk (it was three round trips per match).
        todo = [seq for seq in chunk if seq not in kept]
        texts = derive_answers(raw, ph, version_of, todo, standings_of=standings_of)
        rows = sorted(texts.items())
        if rows:
            raw.cursor().executemany(
                f"INSERT INTO kept_answers (sequence, response) VALUES ({ph}, {ph})", rows
            )


def drop_derivable(
    raw: Any, ph: str, version_of: VersionOf, after: int, standings_of: StandingsOf | None = None
) -> None:
    """After the rebuild: delete the kept answers after ``after`` that the facts derive again
    (``standings_of``: the standings after the rebuild, as the caller holds them)."""
    last = after
    while True:
        rows = raw.execute(
            f"SELECT k.sequence, k.response, m.voided FROM kept_answers k JOIN matches m"
            f" ON m.sequence = k.sequence WHERE k.sequence > {ph} ORDER BY k.sequence LIMIT {_CHUNK}",
            (last,),
        ).fetchall()
        if not rows:
            return
        live = [int(seq) for seq, _, voided in rows if not voided]
        texts = derive_answers(raw, ph, version_of, live, kept=False, standings_of=standings_of)
        drop = [(seq,) for seq, text, voided in rows if voided or texts[int(seq)] == text]
        if drop:
            raw.cursor().executemany(f"DELETE FROM kept_answers WHERE sequence = {ph}", drop)
        last = int(rows[-1][0])
