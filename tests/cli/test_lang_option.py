"""--lang on `rate` and `analyze`: the explanation and the table in the reader's language."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sedma_elo.cli import app

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "src" / "sedma_elo" / "game" / "examples" / "example_match.json"
)
runner = CliRunner()
FLAGS = ["rate", "--player-a", "alice", "--player-b", "bob", "--winner", "a"]
FLAGS += ["--rating-a", "1000", "--rating-b", "1100", "--a-16", "3", "--a-bad-moves", "2"]


def test_rate_explains_in_german() -> None:
    """`rate --lang de` prints the sentences in German, the post's words for the 16ers included."""
    result = runner.invoke(app, [*FLAGS, "--lang", "de"])
    assert result.exit_code == 0, result.output
    assert "alice gewann gegen bob – ein stärkerer Spieler" in result.stdout
    assert "3 gewonnene Runden mit 16 Punkten bringen 3 × 0,05 = +0,15" in result.stdout


def test_rate_table_in_german() -> None:
    """`rate --lang de` titles and labels its table in German, with German decimal marks."""
    result = runner.invoke(app, [*FLAGS, "--lang", "de"])
    assert result.exit_code == 0, result.output
    for label in ("Wertungsänderung (reference@1.0)", "Wertung vorher", "Bonus mit 16 Punkten", "Ausgang"):
        assert label in result.stdout, label
    assert "Sieg" in result.stdout and "Niederlage" in result.stdout
    assert "3 x 0,05 = +0,15" in result.stdout
    assert "rating before" not in result.stdout


def test_rate_explains_variant_reasons_in_italian() -> None:
    """`rate --lang it` with K by games played says why K is what it is in Italian."""
    rules = Path(__file__).resolve().parents[2] / "docs" / "atp_tuned_rules.toml"
    result = runner.invoke(app, [*FLAGS, "--lang", "it", "--rules", str(rules), "--games-a", "3"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "moltiplicato per 1,72144 per un nuovo giocatore (3 < 26 partite)" in text
    assert "margine di vittoria: dominanza" in text.lower()
    assert "new player" not in text and "margin of victory" not in text


def test_rate_json_explanation_follows_lang() -> None:
    """`rate --json --lang zh` keeps every number and puts Chinese sentences in `explanation`."""
    english = json.loads(runner.invoke(app, [*FLAGS, "--json"]).stdout)
    chinese = json.loads(runner.invoke(app, [*FLAGS, "--json", "--lang", "zh"]).stdout)
    for en, zh in zip(english["players"], chinese["players"], strict=True):
        assert {k: v for k, v in en.items() if k != "explanation"} == {
            k: v for k, v in zh.items() if k != "explanation"
        }
        assert zh["explanation"] != en["explanation"]
    assert chinese["players"][0]["explanation"][0].startswith("alice 战胜了 bob，对手是更强的玩家")


def test_unknown_language_is_a_usage_error() -> None:
    """--lang fr exits 2 with a message naming the option and the languages."""
    for args in ([*FLAGS, "--lang", "fr"], ["analyze", str(EXAMPLE), "--judge", "none", "--lang", "fr"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "error: --lang: must be one of en, de, it, es, sk, zh, got 'fr'" in result.stderr
        assert "Traceback" not in result.output


def test_analyze_table_in_slovak() -> None:
    """`analyze --lang sk` titles and heads its table in Slovak."""
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--judge", "none", "--lang", "sk"])
    assert result.exit_code == 0, result.output
    assert "Podľa hráča" in result.stdout
    assert "vyhrané kolá" in result.stdout
