"""A missing tool fails under CI=true and skips elsewhere, saying what is missing."""

from __future__ import annotations

import pytest

from needs import unavailable
from oracle import csharp


def test_missing_tool_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """With CI=true a missing tool is a failure whose message names the tool."""
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and mono is missing"):
        unavailable("mono is missing")


@pytest.mark.parametrize("ci", ["", "false", "0"])
def test_missing_tool_skips_elsewhere(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    """Without CI=true a missing tool skips the test with the reason."""
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="mono is missing"):
        unavailable("mono is missing")


def test_missing_mono_is_named_with_its_debian_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without mcs and mono on PATH the oracle says which tools and packages are missing."""
    monkeypatch.setenv("PATH", "/nonexistent")
    reason = csharp.mono_missing()
    assert reason is not None
    assert "mcs and mono not found" in reason
    assert "mono-mcs" in reason
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="C# oracle cannot run"):
        csharp.require_mono()
