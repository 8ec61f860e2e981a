"""Run many independent one-match cases through the batch kernel in one call."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sedma_elo import Rules, run_kernel
from sedma_elo.batch.history import WINNER_A, WINNER_B, HistoryArrays

from .csharp import Case


def kernel_rate_many(cases: Sequence[Case], rules: Rules) -> list[tuple[int, int]]:
    """The kernel's new ratings for each case: case ``i`` is a match of players ``2i`` and ``2i + 1``."""
    n = len(cases)
    arr = np.array([[ra, rb, int(won), *rest] for ra, rb, won, *rest in cases], dtype=np.int64)
    history = HistoryArrays(
        player_ids=[f"p{i}" for i in range(2 * n)],
        player_a=np.arange(0, 2 * n, 2, dtype=np.int32),
        player_b=np.arange(1, 2 * n, 2, dtype=np.int32),
        winner=np.where(arr[:, 2] == 1, WINNER_A, WINNER_B).astype(np.int8),
        counts=arr[:, 3:].astype(np.int32),
        match_ids=[f"m{i}" for i in range(n)],
        played_at=[""] * n,
        lines=np.zeros(n, dtype=np.int64),
    )
    ratings = arr[:, :2].reshape(-1).copy()
    run_kernel(history, rules, ratings, np.zeros(2 * n, dtype=np.int64))
    return [(a, b) for a, b in ratings.reshape(n, 2).tolist()]
