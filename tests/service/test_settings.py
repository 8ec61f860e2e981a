"""Insecure settings are refused at start."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError as PydanticValidationError
from typer.testing import CliRunner

from sedma_elo.cli import app as cli_app
from sedma_elo.errors import ValidationError
from sedma_elo.service import ServiceSettings, create_app
from sedma_elo.service.settings import cpu_set

_STRONG = "vN2kQ8pL5rT1wX7yB4mC9dF6gH3j"  # 28 URL-safe characters, as token_urlsafe gives


@pytest.mark.parametrize(
    "key",
    [
        "short",
        "sk_short",
        "x" * 40,
        "sk_" + "a" * 29,  # issue 12 row 10: long enough, one character
        "sk_" + " " * 29,  # outside the URL-safe alphabet (and unusable in a header)
        "sk_" + "ab" * 20,  # two distinct characters
        "sk_" + "abcdef" * 6,  # six distinct characters
        # A strong key but for one character outside the alphabet (fixed: the test ids must be the
        # same in every process of a parallel run).
        "sk_" + _STRONG + "+",
        "sk_" + _STRONG + "é",
    ],
)
def test_weak_admin_bootstrap_key_is_refused(key: str) -> None:
    """A bootstrap admin key must be a strong sk_ key (length, alphabet, distinct characters, entropy)."""
    with pytest.raises(ValidationError, match="admin_key"):
        create_app(ServiceSettings(admin_key=key))


def test_public_address_without_rate_limit_is_refused() -> None:
    """Listening beyond loopback with the rate limit off is refused."""
    with pytest.raises(ValidationError, match="rate_limit"):
        create_app(ServiceSettings(host="0.0.0.0", rate_limit=0))


def test_loopback_without_rate_limit_is_allowed() -> None:
    """On 127.0.0.1 the limit may be switched off (benchmarks)."""
    ServiceSettings(host="127.0.0.1", rate_limit=0).check_secure()


def test_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """SEDMA_ELO_DATABASE_URL configures the database."""
    monkeypatch.setenv("SEDMA_ELO_DATABASE_URL", "sqlite:///elsewhere.db")
    assert ServiceSettings().database_url == "sqlite:///elsewhere.db"


def test_bootstrap_admin_key_works_and_is_stored_hashed(tmp_path: Path) -> None:
    """A strong SEDMA_ELO_ADMIN_KEY is usable at once on admin routes, and only its hash is kept."""
    key = "sk_" + secrets.token_urlsafe(32)
    url = f"sqlite:///{tmp_path}/boot.db"
    with TestClient(create_app(ServiceSettings(database_url=url, admin_key=key))) as client:
        r = client.get("/v1/admin/keys", headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200
        assert [k["scope"] for k in r.json()["items"]] == ["admin"]
    assert key.encode() not in Path(f"{tmp_path}/boot.db").read_bytes()


@pytest.mark.parametrize("cpus", ["", "x", "0,", "1-0", "0-", "-1", "²", "9999"])
def test_a_writer_cpu_list_that_is_not_one_is_refused(cpus: str) -> None:
    """WRITER_CPUS must be a CPU list of CPUs this machine has; the error names the field."""
    with pytest.raises(PydanticValidationError, match="writer_cpus"):
        ServiceSettings(writer_cpus=cpus)


@pytest.mark.parametrize(("cpus", "expected"), [("0", {0}), ("0,0", {0}), (" 0 ", {0}), ("0-0", {0})])
def test_a_writer_cpu_list_gives_its_cpus(cpus: str, expected: set[int]) -> None:
    """A CPU list names single CPUs and ranges, as Linux's lists do."""
    assert ServiceSettings(writer_cpus=cpus).writer_cpus == expected


@pytest.mark.parametrize("cpus", ["0", "0-0", "0,0"])
def test_the_writer_cpu_variable_is_read_as_a_cpu_list(cpus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """SEDMA_ELO_WRITER_CPUS is a Linux CPU list, not JSON: "0", "0-0" and "0,0" all give CPU 0."""
    monkeypatch.setenv("SEDMA_ELO_WRITER_CPUS", cpus)
    assert ServiceSettings().writer_cpus == {0}


def test_cpu_ranges_take_every_cpu_between() -> None:
    """``low-high`` is every CPU from low to high (checked against this machine's count)."""
    count = os.cpu_count() or 1
    assert cpu_set(f"0-{count - 1}") == set(range(count))
    assert ServiceSettings().writer_cpus is None


def test_serve_with_a_cpu_the_machine_lacks_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve` with WRITER_CPUS beyond the machine stops before it creates anything, naming the setting."""
    for name in ("HOST", "PORT", "DATABASE_URL", "ACCESS_LOG", "LOG_FORMAT"):
        monkeypatch.setenv(f"SEDMA_ELO_{name}", "")  # serve sets them; the monkeypatch restores them after
    monkeypatch.setenv("SEDMA_ELO_WRITER_CPUS", str(os.cpu_count()))
    db = tmp_path / "ledger.db"
    result = CliRunner().invoke(cli_app, ["serve", "--create", "--database-url", f"sqlite:///{db}"])
    assert result.exit_code == 2
    assert "writer_cpus" in result.output
    assert not db.exists()


def test_reads_in_flight_default_to_the_pool_and_never_exceed_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The async reader: its pool by default, the setting if given and smaller."""
    assert ServiceSettings(pool_size=7).reader_connections() == 7
    assert ServiceSettings(pool_size=7, reads_in_flight=50).reader_connections() == 7
    monkeypatch.setenv("SEDMA_ELO_READS_IN_FLIGHT", "3")
    assert ServiceSettings().reader_connections() == 3


def test_the_app_reads_with_that_many_connections(tmp_path: Path) -> None:
    """create_app sizes the ledger's async reader by reader_connections()."""
    settings = ServiceSettings(database_url=f"sqlite:///{tmp_path}/l.db", reads_in_flight=3, rate_limit=0)
    with TestClient(create_app(settings)) as client:
        assert client.app.state.reads.reader.size == 3  # type: ignore[attr-defined]
