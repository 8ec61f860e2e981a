"""A rebuild's rating changes in primary-key order, in passes over ranges of player keys.

``rating_changes`` is clustered by ``(version_id, player_key, sequence)``. A rebuild rates the
ledger in sequence order; written chunk by chunk, each chunk's rows for a player land after that
player's rows of the chunk before, in the middle of the version's key range: every chunk walked the
whole range again (page splits, half-full pages, cache misses). Held until the end of the ledger
and written sorted by ``(player_key, sequence)``, a new version's rows are appends at the right
edge of the b-tree (SQLite's append; PostgreSQL's rightmost-leaf fast path), and a catch-up's rows
one ordered walk of the version's range.

Memory stays bounded: a pass holds at most :data:`HOLD_BUDGET` changes. When the changes of a pass
would pass it, the pass keeps only the lowest player keys (those whose changes fit), and the
ledger is rated again from the rebuild's start for the next range of keys (the kernel's replay
costs ~50 ms for the whole ATP file; the reads cost more, so the budget is set so that the ATP
file fits one pass).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .bulk import Int64Array
from .rebuild import Progress, Rebuild

__all__ = ["HOLD_BUDGET", "WRITE_SLICE", "rate_in_key_order"]

#: Rating changes one pass holds (32 bytes each, twice while sorted: ~100 MB at most).
HOLD_BUDGET = 1_600_000

#: Changes per insert statement: each slice is in primary-key order, so slices append in turn.
WRITE_SLICE = 100_000


def _cut(held: Int64Array, keep: int) -> int:
    """The smallest key bound such that the changes of ``held`` with a lower key number at most
    ``keep`` (at least one key more than the lowest: a pass always makes progress)."""
    keys = np.sort(held[:, 1])
    return int(max(keys[min(keep, len(keys) - 1)], keys[0] + 1))


def rate_in_key_order(
    plan: Rebuild, progress: Progress | None = None, budget: int | None = None
) -> Iterator[Int64Array]:
    """Rate the rebuild's ledger; yield its changes ``(seq, key, before, after)`` in slices of at
    most :data:`WRITE_SLICE`, in ``(key, seq)`` order over all slices (each key's once, the keys
    ascending). ``plan.state`` ends as after one pass; ``progress`` follows the first pass.

    Raises:
        ValidationError: the rules refuse a match (as the fold would).
    """
    budget = HOLD_BUDGET if budget is None else budget
    low, first = 0, True
    while True:
        high: int | None = None  # no upper bound on the keys this pass holds, until the budget cuts one
        held: list[Int64Array] = []
        count = rated = 0
        for changes in plan.rate(progress if first else None):
            seqs = changes[:, 0]
            rated += int(np.count_nonzero(seqs[1:] != seqs[:-1])) + 1 if len(seqs) else 0
            keys = changes[:, 1]
            mask = keys >= low if high is None else (keys >= low) & (keys < high)
            part = changes[mask] if not mask.all() else changes
            held.append(part)
            count += len(part)
            if count > budget:
                # Keep the lowest keys, as many as the rest of the ledger will likely leave room for.
                together = np.concatenate(held)
                share = rated / max(plan.total, 1)
                high = _cut(together, int(budget * share * 0.9))
                held = [together[together[:, 1] < high]]
                count = len(held[0])
        if held:
            together = np.concatenate(held)
            del held
            # Each chunk's changes are in sequence order: a stable sort by key gives (key, seq).
            ordered = together[np.argsort(together[:, 1], kind="stable")]
            del together
            for at in range(0, len(ordered), WRITE_SLICE):
                yield ordered[at : at + WRITE_SLICE]
        if high is None:
            return
        plan.restart()
        low, first = high, False
