"""serve --demo: the same two public demo keys every run, an admin one included, loopback only."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sedma_elo.cli import app
from sedma_elo.errors import ValidationError
from sedma_elo.service.demo import DEMO_ADMIN_KEY, DEMO_WRITE_KEY, demo_keys, refuse_public_demo_keys
from sedma_elo.service.keys import authenticate, list_keys, revoke_key
from sedma_elo.storage import open_database

runner = CliRunner()


def test_demo_keys_are_reused_not_added(db_url: str) -> None:
    """Three demo starts leave exactly one write and one admin demo key, both working."""
    db = open_database(db_url)
    try:
        for _ in range(3):
            keys = demo_keys(db, "127.0.0.1")
        assert keys == {"write": DEMO_WRITE_KEY, "admin": DEMO_ADMIN_KEY}
        assert sorted(k.scope for k in list_keys(db)) == ["admin", "write"]
        assert authenticate(db, DEMO_ADMIN_KEY).scope == "admin"
    finally:
        db.dispose()


def test_a_revoked_demo_key_stays_revoked(db_url: str) -> None:
    """Revoking the demo admin key is not undone by the next demo start; it is left out."""
    db = open_database(db_url)
    try:
        demo_keys(db, "127.0.0.1")
        revoke_key(db, authenticate(db, DEMO_ADMIN_KEY).id)
        assert demo_keys(db, "127.0.0.1") == {"write": DEMO_WRITE_KEY}
    finally:
        db.dispose()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_demo_keys_are_refused_on_a_public_address(db_url: str, host: str) -> None:
    """The demo does not create its public keys for a non-loopback address."""
    db = open_database(db_url)
    try:
        with pytest.raises(ValidationError, match="loopback"):
            demo_keys(db, host)
        assert list_keys(db) == []
    finally:
        db.dispose()


def test_serving_publicly_is_refused_while_demo_keys_work(db_url: str) -> None:
    """A database with a live demo key may be served on loopback only, until the key is revoked."""
    db = open_database(db_url)
    try:
        demo_keys(db, "localhost")
        refuse_public_demo_keys(db, "127.0.0.1")
        with pytest.raises(ValidationError, match="revoke"):
            refuse_public_demo_keys(db, "0.0.0.0")
        for key in (DEMO_WRITE_KEY, DEMO_ADMIN_KEY):
            revoke_key(db, authenticate(db, key).id)
        refuse_public_demo_keys(db, "0.0.0.0")
    finally:
        db.dispose()


def test_serve_demo_on_a_public_address_exits_2(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve --demo --host 0.0.0.0` stops before serving with a one-line error."""
    url = f"sqlite:///{tmp_path}/demo.db"
    for name in ("HOST", "PORT", "DATABASE_URL", "ACCESS_LOG", "LOG_FORMAT"):
        monkeypatch.setenv(f"SEDMA_ELO_{name}", "")  # serve sets them; the monkeypatch restores them after
    result = runner.invoke(app, ["serve", "--demo", "--host", "0.0.0.0", "--database-url", url])
    assert result.exit_code == 2
    assert "error: host: --demo prints public demo keys" in result.output


def test_the_demo_prints_both_keys_marked_as_demo(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """serve --demo's set-up prints the admin and the write key under a DEMO heading."""
    from sedma_elo.cli.service_commands import _prepare_demo

    _prepare_demo(db_url, "127.0.0.1", 8000)
    out = capsys.readouterr().out
    heading = out.index("DEMO keys (public")
    assert out.index(DEMO_ADMIN_KEY, heading) > heading and out.index(DEMO_WRITE_KEY, heading) > heading
    assert out.strip().splitlines()[-1] == DEMO_WRITE_KEY
