"""The engine commands: rate, rules show/check/init, demo; errors exit 2 without a traceback."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sedma_elo import REFERENCE_RULES, Match, PlayerStats, load_rules, rate, rules_from_toml
from sedma_elo.cli import app
from sedma_elo.cli.engine_commands import commented_toml, load_sample_history, replay_matches
from sedma_elo.core.compat import calculate_new_ratings
from sedma_elo.core.explain import result_to_dict

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
FLAGS = ["rate", "--player-a", "alice", "--player-b", "bob", "--winner", "a"]
FLAGS += ["--rating-a", "1000", "--rating-b", "1100", "--a-16", "3", "--a-bad-moves", "2"]


def _fails_with(args: list[str], message: str, stdin: str | None = None) -> None:
    result = runner.invoke(app, args, input=stdin)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


# ---------------------------------------------------------------------------- rate
def test_rate_prints_a_table_and_sentences() -> None:
    """The readable output has the breakdown rows and each player's sentences."""
    result = runner.invoke(app, FLAGS)
    assert result.exit_code == 0, result.output
    for text in ("expected score", "16er bonus", "3 x 0.05 = +0.15", "1026 (+26)", "1074 (-26)"):
        assert text in result.stdout
    assert "alice won against bob, a stronger player" in result.stdout


def test_rate_json_is_the_explanation_object() -> None:
    """--json prints exactly result_to_dict of the same match."""
    result = runner.invoke(app, [*FLAGS, "--json"])
    assert result.exit_code == 0, result.output
    match = Match.single("alice", "bob", "a", PlayerStats(bad_moves=2, won_by_16=3), PlayerStats())
    assert json.loads(result.stdout) == result_to_dict(rate(match, {"alice": 1000, "bob": 1100}))
    assert json.loads(result.stdout)["new_ratings"] == {"alice": 1026, "bob": 1074}


def test_rate_match_file_with_a_team_draw(tmp_path: Path) -> None:
    """--match FILE reads the JSON form (teams, draw, ratings)."""
    request = {
        "team_a": ["alice", "carol"],
        "team_b": ["bob", "dave"],
        "winner": "draw",
        "ratings": {"alice": 1000, "carol": 1200, "bob": 1250, "dave": 1350},
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(request))
    result = runner.invoke(app, ["rate", "--match", str(path), "--json"])
    assert result.exit_code == 0, result.output
    # Mean team ratings 1100 vs 1300: expected 1 / (1 + sqrt(10)) = 0.2403; a draw scores 0.5.
    # alice: 1000 + 40 * 0.2597 = 1010.39 -> 1010; dave: 1350 + 32 * (0.5 - 0.7597) = 1341.69 -> 1342.
    new = json.loads(result.stdout)["new_ratings"]
    assert new["alice"] == 1010
    assert new["dave"] == 1342


def test_rate_match_from_stdin() -> None:
    """--match - reads standard input."""
    text = '{"player_a": "alice", "player_b": "bob", "winner": "b"}'
    result = runner.invoke(app, ["rate", "--match", "-", "--json"], input=text)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["new_ratings"] == {"alice": 980, "bob": 1020}


def test_rate_with_rules_file(tmp_path: Path) -> None:
    """--rules changes the coefficients: K 10 everywhere gives +5 for an equal win."""
    path = tmp_path / "r.toml"
    path.write_text('name = "flat"\n[k_factor]\ntiers = []\ntop = 10\n')
    result = runner.invoke(
        app, ["rate", "--player-a", "x", "--player-b", "y", "--winner", "a", "--rules", str(path), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rules"] == "flat@1.0"
    assert data["new_ratings"] == {"x": 1005, "y": 995}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["rate", "--player-a", "alice", "--player-b", "bob", "--winner", "c"],
            "'--winner': 'c' is not one of 'a', 'b', 'draw'",
        ),
        (["rate", "--player-a", "alice", "--player-b", "bob"], "--winner: is required"),
        (["rate", "--player-b", "bob", "--winner", "a"], "--player-a: is required"),
        ([*FLAGS[:7], "--a-16", "-1"], "--a-16: must be >= 0"),
        ([*FLAGS[:7], "--b-bad-moves", "-3"], "--b-bad-moves: must be >= 0"),
        (
            ["rate", "--player-a", "alice", "--player-b", "alice", "--winner", "a"],
            "player_b: a player cannot",
        ),
        ([*FLAGS[:7], "--rating-a", "60000"], "--rating-a: must be within [-50000, 50000]"),
        ([*FLAGS[:7], "--rating-a", "1", "--rating-a", "2"], "--rating-a: give it once per player"),
        (
            [
                "rate",
                "--player-a",
                "a1",
                "--player-a",
                "a2",
                "--player-b",
                "b1",
                "--player-b",
                "b2",
                "--winner",
                "a",
                "--a-16",
                "1",
            ],
            "--a-16: statistics of team players need --match FILE",
        ),
        (["rate", "--match", "-", "--player-a", "alice"], "--player-a: cannot be combined with --match"),
        (["rate", "--match", "/nonexistent/m.json"], "cannot read /nonexistent/m.json"),
        ([*FLAGS, "--rules", "/nonexistent/r.toml"], "cannot read /nonexistent/r.toml"),
    ],
)
def test_rate_errors_exit_2_naming_the_field(args: list[str], message: str) -> None:
    """Each bad input prints 'error: <field>: ...' to stderr and exits 2."""
    _fails_with(args, message, stdin="{}")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"player_a": "a", "player_b": "b", "winner": "a", "stats": {"a": {"bad_moves": 1.5}}}',
            "stats.a.bad_moves",
        ),
        ('{"player_a": "a", "player_b": "b", "winner": "x"}', "winner: must be one of"),
        ('{"player_a": "a", "player_b": "b", "winner": "a", "ratings": {"a": "high"}}', "ratings.a:"),
        ("{not json", "(json): not valid JSON"),
    ],
)
def test_rate_json_errors_exit_2_naming_the_field(text: str, message: str) -> None:
    """Bad match JSON is refused by field name."""
    _fails_with(["rate", "--match", "-"], message, stdin=text)


# ---------------------------------------------------------------------------- rules
def test_rules_show_prints_the_reference_toml() -> None:
    """`rules show` without a file prints TOML that reads back to the reference rules."""
    result = runner.invoke(app, ["rules", "show"])
    assert result.exit_code == 0, result.output
    assert rules_from_toml(result.stdout) == REFERENCE_RULES


def test_rules_show_table(tmp_path: Path) -> None:
    """`rules show FILE --table` lists the keys of that file's rules."""
    path = tmp_path / "r.toml"
    path.write_text('name = "mine"\n[malus]\nmax = 0.25\n')
    result = runner.invoke(app, ["rules", "show", str(path), "--table"])
    assert result.exit_code == 0, result.output
    assert "malus.max" in result.stdout
    assert "0.25" in result.stdout
    assert "mine@1.0" in result.stdout


def test_rules_check_ok(tmp_path: Path) -> None:
    """A valid file is reported OK with its label."""
    path = tmp_path / "r.toml"
    REFERENCE_RULES.save(path)
    result = runner.invoke(app, ["rules", "check", str(path)])
    assert result.exit_code == 0
    assert result.stdout.startswith(f"OK: {path} is valid rules reference@1.0")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[bonus]\nmax_16 = -0.1\n", "bonus.max_16"),
        ("[k_factor]\ntiers = [{below = 1800, k = 32}, {below = 1200, k = 40}]\n", "k_factor.tiers[1].below"),
        ("[bonus]\nper_99 = 1\n", "bonus.per_99"),
        ('initial_rating = "1000"\n', "initial_rating"),
    ],
)
def test_rules_check_names_the_key(tmp_path: Path, text: str, key: str) -> None:
    """A bad rules file exits 2 with the file and the key in the message."""
    path = tmp_path / "bad.toml"
    path.write_text(text)
    _fails_with(["rules", "check", str(path)], f"error: {path}: {key}: ")


def test_rules_init_writes_commented_reference_rules(tmp_path: Path) -> None:
    """`rules init` writes a commented file that loads as the reference rules."""
    path = tmp_path / "new.toml"
    result = runner.invoke(app, ["rules", "init", str(path)])
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert text.count("\n# ") >= 8
    assert load_rules(path) == REFERENCE_RULES
    assert load_rules(path).description == REFERENCE_RULES.description


def test_rules_init_refuses_to_overwrite(tmp_path: Path) -> None:
    """An existing file is kept unless --force is given."""
    path = tmp_path / "r.toml"
    path.write_text("keep me")
    _fails_with(["rules", "init", str(path)], "exists; use --force")
    assert path.read_text() == "keep me"
    assert runner.invoke(app, ["rules", "init", str(path), "--force"]).exit_code == 0
    assert load_rules(path) == REFERENCE_RULES


def test_commented_toml_of_a_variant_reads_back() -> None:
    """Comments never change the values: a variant reads back equal."""
    variant = REFERENCE_RULES.replace(name="v", malus_cap=0.2, team_rating="sum")
    assert rules_from_toml(commented_toml(variant)) == variant


# ---------------------------------------------------------------------------- demo and help
def test_demo_prints_leaderboard_and_an_explained_match() -> None:
    """`demo` replays the sample, prints a ranked leaderboard and one explained match."""
    result = runner.invoke(app, ["demo", "--top", "5"])
    assert result.exit_code == 0, result.output
    assert "Leaderboard after 400 sample matches" in result.stdout
    ratings, _, _ = replay_matches(load_sample_history())
    best = max(ratings.values())
    first_row = next(
        line for line in result.stdout.splitlines() if line.strip().startswith("│ ") and " 1 │" in line
    )
    assert f" {best} " in first_row
    assert "Explained: match sample-" in result.stdout
    assert "Change: K × (score − expected)" in result.stdout


def test_sample_replay_agrees_with_the_csharp_port() -> None:
    """Replaying the sample's decided matches equals a loop over calculate_new_ratings."""
    matches = [m for m in load_sample_history() if m.winner != "draw"]
    assert len(matches) > 300
    ratings, played, _ = replay_matches(matches)
    mine: dict[str, int] = {}
    for m in matches:
        a, b = m.team_a[0], m.team_b[0]
        sa, sb = m.stats_of(a), m.stats_of(b)
        mine[a], mine[b] = calculate_new_ratings(
            mine.get(a, 1000), mine.get(b, 1000), m.winner == "a",
            sa.bad_moves, sb.bad_moves, sa.won_by_16, sb.won_by_16,
            sa.won_by_24, sb.won_by_24, sa.won_by_4_and_last, sb.won_by_4_and_last,
        )  # fmt: skip
    assert ratings == mine
    assert sum(played.values()) == 2 * len(matches)


def test_sample_history_is_reproducible(tmp_path: Path) -> None:
    """scripts/make_sample_history.py writes the shipped file byte for byte."""
    spec = importlib.util.spec_from_file_location("make_sample", ROOT / "scripts" / "make_sample_history.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.OUT = tmp_path / "sample.csv"
    module.main()
    shipped = ROOT / "src" / "sedma_elo" / "data" / "sample_history.csv"
    assert module.OUT.read_bytes() == shipped.read_bytes()


@pytest.mark.parametrize(
    "command", [[], ["rate"], ["demo"], ["rules"], ["rules", "show"], ["rules", "check"], ["rules", "init"]]
)
def test_every_command_has_help(command: list[str]) -> None:
    """--help works on every command and describes it."""
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.stdout
    assert len(result.stdout.split("\n")) > 5


def test_rate_team_and_draw_from_flags() -> None:
    """Repeated --player-a/--rating-a give a team; --winner draw works from flags."""
    args = ["rate", "--player-a", "alice", "--player-a", "carol", "--player-b", "bob", "--player-b", "dave"]
    args += ["--rating-a", "1000", "--rating-a", "1200", "--rating-b", "1250", "--rating-b", "1350"]
    result = runner.invoke(app, [*args, "--winner", "draw", "--json"])
    assert result.exit_code == 0, result.output
    # Means 1100 vs 1300, expected_a = 1 / (1 + sqrt(10)) = 0.2403; draw: alice 1000 + 40 * 0.2597 -> 1010,
    # carol 1200 + 32 * 0.2597 -> 1208, bob 1250 - 32 * 0.2597 -> 1242, dave 1350 - 8.31 -> 1342.
    assert json.loads(result.stdout)["new_ratings"] == {
        "alice": 1010,
        "carol": 1208,
        "bob": 1242,
        "dave": 1342,
    }
