"""Unknown keys cost no more than known ones (issue 12 row 2): no blocking lookup on the event loop,
failed lookups cached briefly, failed checks limited per client address."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import make_api, single
from sedma_elo.errors import AuthError, RateLimitError
from sedma_elo.service.auth import (
    FailureLimiter,
    KeyCache,
    KeyGuard,
    MissCache,
    RateLimiter,
    create_key,
    keys,
)
from sedma_elo.storage import Database, open_database


def _random_key() -> str:
    return "sk_" + secrets.token_urlsafe(32)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path}/keys.db")
    yield database
    database.dispose()


def _guard(db: Database, *, burst: int = 1000, miss_ttl: float = 60.0) -> KeyGuard:
    return KeyGuard(db, RateLimiter(0, 1), KeyCache(60.0), FailureLimiter(1.0, burst), MissCache(miss_ttl))


def _slow_counted_lookups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make every key lookup take 50 ms (so that concurrent checks overlap); the list counts them."""
    calls = [0]
    real = keys.find_key

    def slow(database: Database, digest: str) -> keys.KeyInfo | None:
        calls[0] += 1
        time.sleep(0.05)
        return real(database, digest)

    monkeypatch.setattr(keys, "find_key", slow)
    return calls


def _answers_at_once(guard: KeyGuard, tokens: list[str], address: str) -> list[str]:
    """The HTTP status each token's write check would get, all checked at once on one event loop."""

    async def one(token: str) -> str:
        try:
            await guard.authorize_async(token, "write", address)
        except RateLimitError:
            return "429"
        except AuthError:
            return "401"
        return "200"

    async def main() -> list[str]:
        return await asyncio.gather(*(one(token) for token in tokens))

    try:
        return asyncio.run(main())
    finally:
        guard.close()


def test_an_async_lookup_does_not_block_the_event_loop(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a slow key lookup runs, the loop keeps running other tasks (the lookup is on a thread)."""
    real = keys.find_key
    loop_threads: set[int] = set()

    def slow(database: Database, digest: str) -> keys.KeyInfo | None:
        loop_threads.add(threading.get_ident())
        time.sleep(0.3)
        return real(database, digest)

    monkeypatch.setattr(keys, "find_key", slow)
    guard = _guard(db)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def main() -> None:
        task = asyncio.create_task(ticker())
        with pytest.raises(AuthError):
            await guard.authorize_async(_random_key(), "write", "10.0.0.1")
        task.cancel()
        assert threading.get_ident() not in loop_threads

    try:
        asyncio.run(main())
    finally:
        guard.close()
    assert ticks >= 10  # ~30 expected in 0.3 s; a blocked loop gives 0


def test_a_repeated_unknown_key_is_looked_up_once(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same unknown key 50 times within the cache's ttl costs one database lookup."""
    calls = 0
    real = keys.find_key

    def counted(database: Database, digest: str) -> keys.KeyInfo | None:
        nonlocal calls
        calls += 1
        return real(database, digest)

    monkeypatch.setattr(keys, "find_key", counted)
    guard = _guard(db)
    wrong = _random_key()
    for _ in range(50):
        with pytest.raises(AuthError):
            guard.authorize(wrong, "write", "10.0.0.1")
    assert calls == 1


def test_the_miss_cache_is_bounded_and_expires() -> None:
    """At most ``max_entries`` hashes, oldest dropped first; an entry is gone after its ttl."""
    cache = MissCache(60.0, max_entries=100)
    for i in range(1000):
        cache.add(f"d{i}")
    assert len(cache) == 100
    assert "d999" in cache and "d0" not in cache
    short = MissCache(0.05)
    short.add("x")
    assert "x" in short
    time.sleep(0.1)
    assert "x" not in short


def test_an_address_past_its_failed_checks_gets_429_without_a_lookup(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``burst`` unknown keys an address is refused 429 (Retry-After) with no lookup; others are not."""
    guard = _guard(db, burst=5)
    for _ in range(5):
        with pytest.raises(AuthError):
            guard.authorize(_random_key(), "write", "10.0.0.1")

    def forbidden(*_: object) -> None:
        raise AssertionError("looked up")

    monkeypatch.setattr(keys, "find_key", forbidden)
    with pytest.raises(RateLimitError) as raised:
        guard.authorize(_random_key(), "write", "10.0.0.1")
    assert 0 < raised.value.retry_after <= 1.0
    monkeypatch.undo()
    with pytest.raises(AuthError):  # another address has its own bucket
        guard.authorize(_random_key(), "write", "10.0.0.2")


def test_a_key_valid_lately_is_checked_again_even_from_a_limited_address(db: Database) -> None:
    """A writer whose cached key expired is not locked out by a flood of bad keys from its address."""
    key, _ = create_key(db, "write", "real")
    guard = KeyGuard(db, RateLimiter(0, 1), KeyCache(0.05), FailureLimiter(0.001, 3), MissCache(60))
    guard.authorize(key, "write", "10.0.0.1")
    for _ in range(3):
        with pytest.raises(AuthError):
            guard.authorize(_random_key(), "write", "10.0.0.1")
    with pytest.raises(RateLimitError):
        guard.authorize(_random_key(), "write", "10.0.0.1")
    time.sleep(0.1)  # the real key's cache entry expires
    assert guard.authorize(key, "write", "10.0.0.1").label == "real"


def test_unknown_keys_over_http_get_401_then_429_json_and_a_real_key_still_writes(tmp_path: Path) -> None:
    """Direct and admin routes: 401s up to the burst, then 429 + Retry-After (JSON); the real key works."""
    for api in make_api(f"sqlite:///{tmp_path}/ledger.db", failed_auth_burst=4, failed_auth_rate=0.5):
        assert api.post(single("f-1")).status_code == 201
        statuses = [api.post(single("f-2"), key=_random_key()).status_code for _ in range(4)]
        assert statuses == [401] * 4
        limited = api.post(single("f-2"), key=_random_key())
        assert limited.status_code == 429, limited.text
        assert int(limited.headers["retry-after"]) >= 1
        assert "address" in limited.json()["detail"]
        admin = api.client.get("/v1/admin/keys", headers=api.headers(_random_key()))
        assert admin.status_code == 429 and "detail" in admin.json()
        assert api.post(single("f-3")).status_code == 201
        assert api.get("/v1/matches/f-2").status_code == 404


def test_concurrent_unknown_keys_look_up_at_most_the_burst(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 unknown keys at once from one address (burst 5): 5 lookups, 45 answered 429 at once."""
    calls = _slow_counted_lookups(monkeypatch)
    answers = _answers_at_once(_guard(db, burst=5), [_random_key() for _ in range(50)], "10.0.0.9")
    assert calls == [5]
    assert sorted(answers) == ["401"] * 5 + ["429"] * 45


def test_concurrent_checks_of_a_valid_key_share_one_lookup_past_the_burst(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 checks at once of a key new to this process, from one address (burst 5): all pass, one lookup."""
    key, _ = create_key(db, "write", "pool")
    calls = _slow_counted_lookups(monkeypatch)
    answers = _answers_at_once(_guard(db, burst=5), [key] * 50, "10.0.0.7")
    assert (answers, calls) == (["200"] * 50, [1])


def test_concurrent_checks_of_one_unknown_key_each_take_a_token(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 checks at once of one unknown key (burst 5): one lookup, 5 answered 401 and 45 answered 429."""
    calls = _slow_counted_lookups(monkeypatch)
    answers = _answers_at_once(_guard(db, burst=5), [_random_key()] * 50, "10.0.0.8")
    assert (sorted(answers), calls) == (["401"] * 5 + ["429"] * 45, [1])


def test_a_failed_lookup_fails_every_check_waiting_for_it(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lookup the database fails fails the checks that waited for it too; the next check looks again."""
    key, _ = create_key(db, "write", "real")
    real = keys.find_key
    calls = 0

    def broken(database: Database, digest: str) -> keys.KeyInfo | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            time.sleep(0.05)
            raise OSError("database gone")
        return real(database, digest)

    monkeypatch.setattr(keys, "find_key", broken)
    guard = _guard(db)

    async def main() -> list[BaseException | keys.KeyInfo]:
        return await asyncio.gather(
            *(guard.authorize_async(key, "write", "10.0.0.6") for _ in range(10)), return_exceptions=True
        )

    try:
        outcomes = asyncio.run(main())
        again = guard.authorize(key, "write", "10.0.0.6")
    finally:
        guard.close()
    assert [type(o).__name__ for o in outcomes] == ["OSError"] * 10
    assert (again.label, calls) == ("real", 2)
