"""The golden vectors (the compiled C# method's results) against the Python port, drop-in and kernel."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from needs import require_shared
from sedma_elo.core.compat import calculate_new_ratings

from . import csharp
from .cases import rate_case
from .golden import GOLDEN, RULES, case, read, result, within_range
from .kernel_pairs import kernel_rate_many

ROOT = Path(__file__).resolve().parents[2]
FILES = ("reference_vectors.csv", "discriminating_vectors.csv")


def _rows(rules: str, kind: str | None = None) -> list[dict[str, str]]:
    rows = [r for name in FILES for r in read(name) if r["rules"] == rules]
    return [r for r in rows if kind is None or r["case"] == kind]


def test_golden_files_have_every_kind_of_row() -> None:
    """The discriminating file holds each kind of case it documents, and the reference file its 3,000 rows."""
    kinds = {(r["rules"], r["case"]) for r in read("discriminating_vectors.csv")}
    expected = {("reference", k) for k in ("k_edge", "equal_ratings", "caps", "clamp", "limits")}
    expected |= {("odd_k", "midpoint"), ("odd_k", "float32")}
    assert kinds == expected
    assert len(read("reference_vectors.csv")) == 3000


@pytest.mark.parametrize("rules", ["reference", "odd_k"])
def test_rate_reproduces_every_golden_row(rules: str) -> None:
    """rate() (its fast result and its explanation) gives the C# method's ratings on every golden row."""
    rows = _rows(rules)
    fast = [(i, rate_case(case(r), RULES[rules]), within_range(result(r))) for i, r in enumerate(rows)]
    assert [x for x in fast if x[1] != x[2]] == []
    explained = [
        (i, rate_case(case(r), RULES[rules], explained=True), within_range(result(r)))
        for i, r in enumerate(rows)
    ]
    assert [x for x in explained if x[1] != x[2]] == []


@pytest.mark.parametrize("rules", ["reference", "odd_k"])
def test_kernel_reproduces_every_golden_row(rules: str) -> None:
    """The batch kernel gives the C# method's ratings on every golden row."""
    rows = _rows(rules)
    got = kernel_rate_many([case(r) for r in rows], RULES[rules])
    assert [
        (i, g) for i, (g, r) in enumerate(zip(got, rows, strict=True)) if g != within_range(result(r))
    ] == []


def test_drop_in_reproduces_every_reference_row() -> None:
    """calculate_new_ratings gives the C# method's ratings on every reference-rules row."""
    rows = _rows("reference")
    assert [r for r in rows if calculate_new_ratings(*case(r)) != within_range(result(r))] == []


def test_limit_rows_reach_past_the_range_where_the_port_holds_the_limit() -> None:
    """Some ``limits`` rows have a C# result beyond +-50,000: the comparisons above check the clamp there."""
    rows = [r for r in read("discriminating_vectors.csv") if r["case"] == "limits"]
    beyond = [r for r in rows if within_range(result(r)) != result(r)]
    assert 0 < len(beyond) < len(rows)


@pytest.mark.parametrize(
    ("kind", "change"), [("midpoint", {"rounding": "half_up"}), ("float32", {"arithmetic": "float64"})]
)
def test_odd_k_rows_tell_the_arithmetic_apart(kind: str, change: dict[str, str]) -> None:
    """Every midpoint row changes under half-up rounding, every float32 row under float64 arithmetic."""
    rows = _rows("odd_k", kind)
    wrong = RULES["odd_k"].replace(**change)
    assert len(rows) >= 100
    assert [r for r in rows if rate_case(case(r), wrong) == result(r)] == []


@pytest.mark.parametrize(
    ("variant", "change"), [("half_up", {"rounding": "half_up"}), ("float64", {"arithmetic": "float64"})]
)
def test_python_arithmetic_options_equal_the_changed_csharp_method(
    variant: str, change: dict[str, str]
) -> None:
    """rounding = half_up and arithmetic = float64 give what the C# method changed the same way gives."""
    csharp.require_mono()
    rows = _rows("odd_k")
    cases = [case(r) for r in rows]
    expected = [within_range(e) for e in csharp.Oracle(csharp.build("odd_k", variant)).rate_many(cases)]
    rules = RULES["odd_k"].replace(**change)
    assert [c for c, e in zip(cases, expected, strict=True) if rate_case(c, rules) != e] == []
    assert kernel_rate_many(cases, rules) == expected


@pytest.mark.parametrize("name", FILES)
def test_compiled_method_reproduces_the_golden_file(name: str) -> None:
    """The compiled C# method, run now, returns every stored result (the files are its output)."""
    csharp.require_mono()
    for rules, variants in (("reference", ()), ("odd_k", ("odd_k",))):
        rows = [r for r in read(name) if r["rules"] == rules]
        if rows:
            got = csharp.Oracle(csharp.build(*variants)).rate_many([case(r) for r in rows])
            assert got == [result(r) for r in rows]


def test_reference_vectors_equal_the_shared_copy() -> None:
    """tests/golden/reference_vectors.csv is byte for byte the shared reference vectors."""
    folder = require_shared("golden")
    assert (GOLDEN / "reference_vectors.csv").read_bytes() == (folder / "reference_vectors.csv").read_bytes()


def test_seed_method_is_the_posts_text() -> None:
    """tests/oracle/seed_method.cs is what every seed post prints, byte for byte."""
    seeds = require_shared("seeds")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "extract_csharp_method.py"), str(seeds), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
