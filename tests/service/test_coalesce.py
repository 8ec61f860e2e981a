"""The coalescer: lookups made while one is out go to the database together, each gets its own answer."""

from __future__ import annotations

import asyncio

import pytest

from sedma_elo.service.ledger.coalesce import Coalescer


class _Table:
    """A fake statement: the keys of each call, answered from ``rows`` after yielding to the loop."""

    def __init__(self, rows: dict[str, int], error: Exception | None = None) -> None:
        self.rows = rows
        self.error = error
        self.calls: list[list[str]] = []

    async def fetch(self, keys: list[str]) -> dict[str, int]:
        self.calls.append(sorted(keys))
        await asyncio.sleep(0)
        if self.error is not None:
            raise self.error
        return {k: self.rows[k] for k in keys if k in self.rows}


def test_concurrent_lookups_share_one_fetch() -> None:
    """Five lookups at once (one key twice, one absent): one fetch of the four keys, each its answer."""
    table = _Table({"a": 1, "b": 2, "c": 3})

    async def main() -> list[int | None]:
        c: Coalescer[str, int] = Coalescer(table.fetch)
        return await asyncio.gather(*(c.get(k) for k in ["a", "b", "c", "b", "zz"]))

    assert asyncio.run(main()) == [1, 2, 3, 2, None]
    assert table.calls == [["a", "b", "c", "zz"]]


def test_lookups_made_while_a_fetch_is_out_wait_for_the_next() -> None:
    """A fetch under way takes no new key: the two asked meanwhile go out together afterwards."""
    table = _Table({"a": 1, "b": 2, "c": 3})

    async def main() -> list[int | None]:
        c: Coalescer[str, int] = Coalescer(table.fetch)
        first = asyncio.ensure_future(c.get("a"))
        await asyncio.sleep(0)  # the first fetch starts
        later = [asyncio.ensure_future(c.get(k)) for k in ("b", "c")]
        return [await first, *[await f for f in later]]

    assert asyncio.run(main()) == [1, 2, 3]
    assert table.calls == [["a"], ["b", "c"]]


def test_a_failed_fetch_reaches_every_caller_of_its_batch_and_the_next_still_runs() -> None:
    """The fetch's error is raised to each of its callers; a later lookup starts a new fetch."""
    table = _Table({"a": 1}, error=RuntimeError("down"))

    async def main() -> tuple[list[object], int | None]:
        c: Coalescer[str, int] = Coalescer(table.fetch)
        failed = await asyncio.gather(c.get("a"), c.get("b"), return_exceptions=True)
        table.error = None
        return failed, await c.get("a")

    failed, later = asyncio.run(main())
    assert [type(e) for e in failed] == [RuntimeError, RuntimeError]
    assert later == 1


def test_a_cancelled_caller_does_not_stop_the_others() -> None:
    """One caller of a batch cancelled: the others of the batch still get their answers."""
    table = _Table({"a": 1, "b": 2, "c": 3})

    async def main() -> list[int | None]:
        c: Coalescer[str, int] = Coalescer(table.fetch)
        first = asyncio.ensure_future(c.get("a"))
        await asyncio.sleep(0)  # the first fetch is out: the next two wait for the second
        gone = asyncio.ensure_future(c.get("b"))
        kept = asyncio.ensure_future(c.get("c"))
        await asyncio.sleep(0)
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        return [await first, await kept]

    assert asyncio.run(main()) == [1, 3]
