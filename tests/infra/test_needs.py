"""A missing tool fails under CI=true and skips elsewhere, saying what is missing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import needs
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


def test_shared_folder_is_found_beside_a_parent_of_the_repository(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A worktree two levels below the shared folder's parent still finds shared/<sub>."""
    (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.delenv("SEDMA_SHARED_DIR", raising=False)
    monkeypatch.delenv("SEDMA_DATA_DIR", raising=False)
    monkeypatch.setattr(needs, "_REPO", tmp_path / "wt" / "branch")
    assert needs.shared("data") == tmp_path / "shared" / "data"
    assert needs.shared("seeds") is None


def test_data_dir_variable_comes_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """SEDMA_DATA_DIR names the data folder itself and wins over SEDMA_SHARED_DIR."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.setenv("SEDMA_DATA_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("SEDMA_SHARED_DIR", str(tmp_path / "shared"))
    assert needs.shared("data") == tmp_path / "mine"


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_missing_atp_file_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ci: str, outcome: type[BaseException]
) -> None:
    """A shared data folder without the ATP file: a failure under CI=true, a skip elsewhere, naming it."""
    monkeypatch.setenv("SEDMA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match=re.escape(f"{needs.ATP_FILE} is not in {tmp_path}")):
        needs.require_atp()
