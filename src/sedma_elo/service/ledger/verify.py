"""Verify: replay the ledger with the one fold and compare with every stored rating."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import select

from ...core.engine import RatingResult
from ...core.fold import RatingState
from ...core.model import Match
from ...core.rules import Rules
from ...storage.schema import player_ratings, players, rating_changes, rating_versions
from .rows import MATCH_COLUMNS, MATCH_FROM, match_of
from .types import VerifyReport
from .versions import VersionsMixin

__all__ = ["VerifyMixin", "replay"]

#: Most differences a report lists.
_MAX_MISMATCHES = 100


def replay(
    entries: Iterable[tuple[int, Match]], rules: Rules, state: RatingState | None = None
) -> Iterator[tuple[int, RatingResult]]:
    """Apply matches in the given order with the one fold, updating ``state`` in place.

    Yields each ``(sequence, result)``. This is the definition every stored rating must agree with.
    """
    current = RatingState() if state is None else state
    for seq, match in entries:
        yield seq, current.apply(match, rules)


class VerifyMixin(VersionsMixin):
    """Checking the stored ratings against a replay."""

    def verify(self) -> VerifyReport:
        """Replay the non-voided ledger with the pure engine for every version and compare.

        Compares each stored rating change (before and after) and each player's final rating and
        match count. The active version must hold the whole non-voided ledger; an inactive version is
        a snapshot and must hold exactly the non-voided matches up to the last one it applied. The
        report lists every difference (at most 100).
        """
        report = VerifyReport()
        with self.db.read.begin() as conn:
            entries = [
                match_of(r)[:2]
                for r in conn.exec_driver_sql(
                    f"SELECT {MATCH_COLUMNS} FROM {MATCH_FROM} WHERE NOT m.voided ORDER BY m.sequence"
                )
            ]
            report.matches = len(entries)
            versions = conn.execute(
                select(rating_versions.c.id, rating_versions.c.active).order_by(rating_versions.c.id)
            ).all()
            for vid, active in versions:
                report.versions += 1
                version = self._version(conn, int(vid))
                through = None if active else self._through(conn, int(vid))
                covered = entries if through is None else [e for e in entries if e[0] <= through]
                expected_changes: dict[tuple[int, str], tuple[int, int]] = {}
                state = RatingState()
                ratings, counts = state.ratings, state.games
                for seq, result in replay(covered, version.rules, state):
                    for c in result.changes:
                        expected_changes[(seq, c.player_id)] = (c.rating_before, c.rating_after)
                rc = rating_changes.c
                stored_changes = {
                    (int(r.sequence), r.player_id): (r.rating_before, r.rating_after)
                    for r in conn.execute(
                        select(rc.sequence, players.c.player_id, rc.rating_before, rc.rating_after)
                        .join(players, players.c.id == rc.player_key)
                        .where(rc.version_id == vid)
                    )
                }
                stored_players = {
                    r.player_id: (r.rating, r.matches_played)
                    for r in conn.execute(select(player_ratings).where(player_ratings.c.version_id == vid))
                }
                report.players += len(stored_players)
                for key in sorted(set(expected_changes) | set(stored_changes)):
                    if expected_changes.get(key) != stored_changes.get(key):
                        report.mismatches.append(
                            f"version {vid}, sequence {key[0]}, player {key[1]}: stored "
                            f"{stored_changes.get(key)}, replay {expected_changes.get(key)}"
                        )
                for pid in sorted(set(ratings) | set(stored_players)):
                    want = (ratings[pid], counts[pid]) if pid in ratings else None
                    if stored_players.get(pid) != want:
                        report.mismatches.append(
                            f"version {vid}, player {pid}: stored (rating, matches) "
                            f"{stored_players.get(pid)}, replay {want}"
                        )
        del report.mismatches[_MAX_MISMATCHES:]
        return report
