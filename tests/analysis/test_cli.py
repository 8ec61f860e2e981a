"""The analysis commands end to end on a small file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sedma_elo.batch.history import write_matches
from sedma_elo.cli import app

from .conftest import synthetic_matches

runner = CliRunner()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("h") / "history.csv"
    write_matches(path, synthetic_matches(20, 300))
    return str(path)


def test_backtest_json(history: str) -> None:
    """--json prints one object with log_loss, brier, accuracy and n_test (90 = 30% of 300)."""
    result = runner.invoke(app, ["backtest", history, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["n_test"] == 90
    assert 0 < out["log_loss"] < 1 and 0 <= out["accuracy"] <= 1 and 0 < out["brier"] < 1


@pytest.mark.slow
def test_backtest_compare_table(history: str) -> None:
    """--compare lists every peer system in one table."""
    result = runner.invoke(app, ["backtest", history, "--compare"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for name in ("elo(k=32)", "glicko-2", "trueskill", "openskill"):
        assert name in result.stdout


def test_backtest_too_short_history(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two matches cannot be split: a clear error and exit status 2, no traceback."""
    path = tmp_path / "tiny.csv"
    write_matches(path, synthetic_matches(5, 2))
    result = runner.invoke(app, ["backtest", str(path)])
    assert result.exit_code == 2
    assert "too few" in result.stderr


def test_backtest_bad_row_named(tmp_path, history: str) -> None:  # type: ignore[no-untyped-def]
    """A bad count in the file is reported with its line and field."""
    lines = Path(history).read_text(encoding="utf-8").splitlines()
    fields = lines[3].split(",")
    fields[5] = "-1"
    lines[3] = ",".join(fields)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["backtest", str(bad)])
    assert result.exit_code == 2
    assert "line 4" in result.stderr and "bad_moves_a" in result.stderr


def test_tune_writes_loadable_rules(tmp_path, history: str) -> None:  # type: ignore[no-untyped-def]
    """tune --out writes a rules file that backtest --rules accepts."""
    out = tmp_path / "tuned.toml"
    result = runner.invoke(app, ["tune", history, "--out", str(out), "--trials", "2"])
    assert result.exit_code == 0, result.output
    assert "validation log loss" in result.stdout
    again = runner.invoke(app, ["backtest", history, "--rules", str(out), "--json"])
    assert again.exit_code == 0
    assert json.loads(again.stdout)["system"].startswith("sedma tuned@")


def test_simulate_and_report(tmp_path, history: str) -> None:  # type: ignore[no-untyped-def]
    """simulate --save and backtest --save feed report, which writes one HTML file."""
    sim, bt, page = tmp_path / "sim.json", tmp_path / "bt.json", tmp_path / "r.html"
    assert (
        runner.invoke(
            app, ["simulate", "--players", "12", "--founders", "8", "--matches", "300", "--save", str(sim)]
        ).exit_code
        == 0
    )
    assert runner.invoke(app, ["backtest", history, "--save", str(bt)]).exit_code == 0
    result = runner.invoke(app, ["report", str(bt), str(sim), "--out", str(page)])
    assert result.exit_code == 0, result.output
    assert "Simulated league" in page.read_text(encoding="utf-8")


def test_backtest_empty_history(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A file with only the header is a clear error naming the history, exit status 2."""
    from sedma_elo.batch.history import COLUMNS

    path = tmp_path / "empty.csv"
    path.write_text(",".join(COLUMNS) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["backtest", str(path), "--json"])
    assert result.exit_code == 2
    assert "history: is empty" in result.stderr


def test_tune_with_constraints_saves_the_front(tmp_path, history: str) -> None:  # type: ignore[no-untyped-def]
    """--max-drift/--max-losing-well choose a feasible trial; the front JSON feeds report."""
    zero_sum, out, page = tmp_path / "zs.toml", tmp_path / "fair.toml", tmp_path / "r.html"
    zero_sum.write_text('name = "zs"\n[update]\nzero_sum = true\n', encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "tune",
            history,
            "--rules",
            str(zero_sum),
            "--out",
            str(out),
            "--trials",
            "3",
            "--max-drift",
            "1",
            "--max-losing-well",
            "5",
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "Pareto front" in result.stdout
    front = json.loads(out.with_suffix(".front.json").read_text(encoding="utf-8"))
    assert front["kind"] == "tune" and front["constraints"] == {
        "max_drift": 1.0,
        "max_losing_well": 5.0,
        "drift_segments": 1,
    }
    chosen = front["chosen"]
    assert abs(chosen["drift_per_100k"]) <= 1 and chosen["losing_well"] <= 5
    assert "warning" not in result.stderr  # zero-sum rules do not drift
    assert (
        runner.invoke(app, ["report", str(out.with_suffix(".front.json")), "--out", str(page)]).exit_code == 0
    )
    assert "Tuning 1" in page.read_text(encoding="utf-8")


def test_tune_warns_about_drifting_rules(tmp_path, history: str) -> None:  # type: ignore[no-untyped-def]
    """Rules that inflate the pool by more than 1 point per 100k matches get a warning on stderr."""
    inflating = tmp_path / "up.toml"
    inflating.write_text(
        'name = "up"\n[score]\nmax = 1.5\n[bonus]\nper_16 = 0.2\nmax_16 = 0.5\n', encoding="utf-8"
    )
    out = tmp_path / "t.toml"
    result = runner.invoke(
        app, ["tune", history, "--rules", str(inflating), "--out", str(out), "--trials", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "inflate" in result.stderr


def test_backtest_candidates_carry_fairness(history: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """--candidate adds a rule set whose JSON row has its fairness figures and a bootstrap interval."""
    zero_sum = tmp_path / "zs.toml"
    zero_sum.write_text('name = "zs"\n[update]\nzero_sum = true\n', encoding="utf-8")
    result = runner.invoke(app, ["backtest", history, "--candidate", str(zero_sum), "--json"])
    assert result.exit_code == 0, result.output
    first, second = json.loads(result.stdout)["systems"]
    assert first["vs_reference"] is None and second["vs_reference"]["low"] <= second["vs_reference"]["high"]
    assert second["fairness"]["drift_per_100k"] == 0.0


def test_backtest_block_bootstrap(history: str, tmp_path: Path) -> None:
    """--bootstrap-block 10 puts the block into every interval of the JSON; 0 exits 2 naming the option."""
    rules = tmp_path / "zero_sum.toml"
    rules.write_text('name = "zs"\n[update]\nzero_sum = true\n', encoding="utf-8")
    args = ["backtest", history, "--candidate", str(rules), "--json", "--bootstrap-block", "10"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)["systems"][1]["vs_reference"]
    assert diff["block"] == 10 and diff["low"] <= diff["mean"] <= diff["high"]
    bad = runner.invoke(app, ["backtest", history, "--bootstrap-block", "0"])
    assert bad.exit_code == 2
    assert "--bootstrap-block: must be at least 1, got 0" in bad.stderr


def test_backtest_player_bootstrap(history: str, tmp_path: Path) -> None:
    """--player-bootstrap adds a players-resampled interval beside the match one in the JSON."""
    rules = tmp_path / "zero_sum.toml"
    rules.write_text('name = "zs"\n[update]\nzero_sum = true\n', encoding="utf-8")
    args = ["backtest", history, "--candidate", str(rules), "--json", "--player-bootstrap"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    first, second = json.loads(result.stdout)["systems"]
    assert first["vs_reference_players"] is None
    by_player, by_match = second["vs_reference_players"], second["vs_reference"]
    assert by_player["unit"] == "player" and by_match["unit"] == "match"
    assert (
        by_player["mean"] == by_match["mean"] and by_player["low"] <= by_player["mean"] <= by_player["high"]
    )


def test_tune_drift_segments(tmp_path: Path, history: str) -> None:
    """--drift-segments 3 puts the eras' drifts into the chosen trial; 0 exits 2 naming the option."""
    out = tmp_path / "t.toml"
    args = [
        "tune",
        history,
        "--out",
        str(out),
        "--trials",
        "2",
        "--max-drift",
        "1000",
        "--drift-segments",
        "3",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    front = json.loads(out.with_suffix(".front.json").read_text(encoding="utf-8"))
    assert front["constraints"]["drift_segments"] == 3 and len(front["chosen"]["segment_drifts"]) == 3
    bad = runner.invoke(app, ["tune", history, "--out", str(out), "--drift-segments", "0"])
    assert bad.exit_code == 2
    assert "--drift-segments: must be at least 1, got 0" in bad.stderr


def test_tune_fix_holds_a_coefficient(tmp_path: Path, history: str) -> None:
    """--fix NAME=VALUE: every trial and the written rules keep that value; the front records it."""
    out = tmp_path / "t.toml"
    fixed = ["--fix", "k_factor.new_player_multiplier=1", "--fix", "k_factor.mode=games"]
    result = runner.invoke(app, ["tune", history, "--out", str(out), "--trials", "3", *fixed])
    assert result.exit_code == 0, result.output
    front = json.loads(out.with_suffix(".front.json").read_text(encoding="utf-8"))
    assert front["fixed"] == ["k_factor.new_player_multiplier=1", "k_factor.mode=games"]
    assert "k_factor.new_player_multiplier" not in front["chosen"]["params"]
    text = out.read_text(encoding="utf-8")
    assert "new_player_multiplier = 1.0" in text and 'mode = "games"' in text


@pytest.mark.parametrize(
    ("fix", "message"),
    [
        ("k_factor.new_player_multiplier", "expected NAME=VALUE"),
        ("no.such=1", "'no.such' is not a tuned coefficient"),
        ("k_factor.new_player_multiplier=9", "must be in its tuning range [1, 3], got 9"),
        ("k_factor.new_player_games=x", "must be an integer, got 'x'"),
        ("k_factor.mode=fast", "must be one of rating, games, min, max"),
    ],
)
def test_tune_fix_bad_value_exits_2(tmp_path: Path, history: str, fix: str, message: str) -> None:
    """A bad --fix exits 2 with an error naming --fix and what is wrong."""
    result = runner.invoke(app, ["tune", history, "--out", str(tmp_path / "t.toml"), "--fix", fix])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --fix: ") and message in result.stderr
