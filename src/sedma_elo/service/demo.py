"""``sedma-elo serve --demo``: a small, reproducible demo history and the demo's two public keys.

The demo keys are fixed, published strings (:data:`DEMO_WRITE_KEY`, :data:`DEMO_ADMIN_KEY`), so
every demo run reuses the same two keys instead of adding new ones. Being public, they are refused
on a server that listens on a non-loopback address (:func:`refuse_public_demo_keys`).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..core.model import Match, PlayerStats, Winner
from ..errors import AuthError, ValidationError
from ..storage import Database
from .keys import KeyInfo, authenticate, create_key
from .settings import is_loopback

__all__ = [
    "DEMO_ADMIN_KEY",
    "DEMO_WRITE_KEY",
    "bundled_sample",
    "demo_keys",
    "demo_matches",
    "refuse_public_demo_keys",
]

#: The demo's keys: published in this file, so never valid on a server reachable from elsewhere.
DEMO_WRITE_KEY = "sk_demo_write_key_public_not_secret_0000"
DEMO_ADMIN_KEY = "sk_demo_admin_key_public_not_secret_0000"

_NAMES = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
    "olivia",
    "peggy",
    "rupert",
    "sybil",
    "trent",
    "uma",
    "victor",
    "wendy",
]


def demo_matches(count: int = 300, seed: int = 7) -> list[Match]:
    """``count`` one-against-one matches among 20 players, one every 20 minutes from 2026-11-01."""
    rng = random.Random(seed)
    strength = {name: rng.gauss(0.0, 1.0) for name in _NAMES}
    start = datetime(2026, 11, 1, tzinfo=UTC)
    out = []
    for i in range(count):
        a, b = rng.sample(_NAMES, 2)
        p_a = 1.0 / (1.0 + 10 ** ((strength[b] - strength[a]) / 1.5))
        roll = rng.random()
        winner: Winner = "draw" if abs(roll - p_a) < 0.03 else ("a" if roll < p_a else "b")
        sa = PlayerStats(rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 1), rng.randint(0, 1))
        sb = PlayerStats(rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 1), rng.randint(0, 1))
        out.append(
            Match.single(
                a,
                b,
                winner,
                sa,
                sb,
                match_id=f"demo-{i + 1:04d}",
                played_at=start + timedelta(minutes=20 * i),
            )
        )
    return out


def bundled_sample() -> Path | None:
    """The engine's bundled sample history, when the package ships one."""
    path = Path(__file__).resolve().parent.parent / "data" / "sample_history.csv"
    return path if path.is_file() else None


def demo_keys(db: Database, host: str) -> dict[str, str]:
    """Make sure the two demo keys exist; ``{"write": key, "admin": key}`` for the ones usable.

    A demo key that was revoked stays revoked (it is left out of the answer).

    Raises:
        ValidationError: ``host`` is not a loopback address (the demo keys are public).
    """
    if not is_loopback(host):
        raise ValidationError("host", "--demo prints public demo keys; it listens on a loopback address only")
    usable: dict[str, str] = {}
    for scope, secret in (("write", DEMO_WRITE_KEY), ("admin", DEMO_ADMIN_KEY)):
        create_key(db, scope, f"demo {scope} key (public)", secret=secret)
        if _active(db, secret) is not None:
            usable[scope] = secret
    return usable


def refuse_public_demo_keys(db: Database, host: str) -> None:
    """Refuse to serve on a non-loopback ``host`` while a demo key is valid in ``db``.

    Raises:
        ValidationError: a demo key is valid and ``host`` is reachable from other machines.
    """
    if is_loopback(host):
        return
    live = [info for info in (_active(db, s) for s in (DEMO_WRITE_KEY, DEMO_ADMIN_KEY)) if info is not None]
    if live:
        ids = ", ".join(str(info.id) for info in live)
        raise ValidationError(
            "host",
            f"the database holds the public demo keys (ids {ids}); revoke them "
            f"(sedma-elo keys revoke ID) before listening on a non-loopback address",
        )


def _active(db: Database, secret: str) -> KeyInfo | None:
    try:
        return authenticate(db, secret)
    except AuthError:
        return None
