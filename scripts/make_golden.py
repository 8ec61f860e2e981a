"""Regenerate tests/golden/ from the seed post's C# method compiled with Mono.

Usage: python scripts/make_golden.py [--check]

1. ``reference_vectors.csv``: the inputs stay as they are (the 3,000 rows of the shared reference
   vectors); the two result columns are recomputed by the C# method.
2. ``discriminating_vectors.csv``: rows chosen so that a port with the wrong arithmetic fails them:
   K tier edges, equal ratings, caps, clamps and the rating limits under the reference method, and,
   under the same method with odd K (41/33/25/17), exact rounding midpoints and near-midpoints where
   float32 and float64 round differently (the reference method has neither: see
   :func:`midpoint_search`).
3. ``README.md``: how the files were made and how many rows each wrong arithmetic changes.

With ``--check`` nothing is written; exit status 1 if a file would change. Needs ``mcs`` and ``mono``
(``scripts/ensure-mono.sh``) and the project installed (``make test`` creates ``.venv``).
"""

from __future__ import annotations

import csv
import io
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from oracle import csharp  # noqa: E402
from oracle.cases import COUNT_EDGES, K_EDGES, random_cases  # noqa: E402
from oracle.csharp import Case  # noqa: E402
from oracle.golden import INPUT_COLUMNS, case  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"
INPUTS = list(INPUT_COLUMNS)
OUTPUTS = ["new_rating_a", "new_rating_b"]
#: Variants compared in the README, applied to both rule sets of the files.
WRONG = ("float64", "half_up", "away_from_zero", "truncate", "k_tiers_inclusive", "no_clamp")
#: Rows of each selected kind kept from the odd-K pool.
PER_KIND = 300


def _row(case: Case, out: tuple[int, int]) -> list[str]:
    ra, rb, won, *rest = case
    return [str(ra), str(rb), "true" if won else "false", *map(str, rest), *map(str, out)]


def _csv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def read_cases(path: Path) -> list[Case]:
    """The inputs of a golden CSV's rows as cases."""
    with path.open(newline="") as fh:
        return [case({"rules": "reference", **row}) for row in csv.DictReader(fh)]


def _reference_cases() -> list[tuple[str, Case]]:
    """The structured rows of the reference method (kind, case)."""
    rng = np.random.default_rng(17)
    out: list[tuple[str, Case]] = []

    def stats() -> list[int]:
        return rng.integers(0, 4, size=8).tolist()

    zero = [0] * 8
    for ra in K_EDGES:
        for rb in (*K_EDGES, ra - 1, ra + 1, 1000, 2500):
            for won in (True, False):
                out.append(("k_edge", (ra, rb, won, *zero)))
                out.append(("k_edge", (ra, rb, won, *stats())))
    for r in (-50_000, -1, 0, 1000, 1199, 1200, 1500, 1799, 1800, 2199, 2200, 50_000):
        for won in (True, False):
            for _ in range(4):
                out.append(("equal_ratings", (r, r, won, *stats())))
    for field in range(8):
        for count in COUNT_EDGES:
            for ra, rb in ((1000, 1000), (1500, 1400)):
                c = [0] * 8
                c[field] = count
                out.append(("caps", (ra, rb, True, *c)))
                out.append(("caps", (ra, rb, False, *c)))
    # The clamp at 1 (a win with bonuses and no malus) and at 0 (a loss with the full malus).
    for bonus in ((3, 3, 2, 2, 3, 3), (1, 0, 1, 0, 1, 0), (10**6,) * 6):
        for bad in ((0, 0), (15, 15), (16, 0), (10**6, 10**6)):
            b16a, b16b, b24a, b24b, b4a, b4b = bonus
            for won in (True, False):
                out.append(("clamp", (1300, 1250, won, bad[0], bad[1], b16a, b16b, b24a, b24b, b4a, b4b)))
    limits = (-50_000, -49_999, 49_999, 50_000)
    for ra, rb in itertools.product(limits, repeat=2):
        for won in (True, False):
            out.append(("limits", (ra, rb, won, *zero)))
            out.append(("limits", (ra, rb, won, *stats())))
    return out


def _odd_k_cases() -> list[tuple[str, Case]]:
    """Odd-K rows where half-up or float64 arithmetic gives another result than the method."""
    pool = random_cases(400_000, seed=41)
    base = csharp.Oracle(csharp.build("odd_k")).rate_many(pool)
    out: list[tuple[str, Case]] = []
    for kind, variant in (("midpoint", "half_up"), ("float32", "float64")):
        other = csharp.Oracle(csharp.build("odd_k", variant)).rate_many(pool)
        differ = [c for c, x, y in zip(pool, base, other, strict=True) if x != y]
        out += [(kind, c) for c in differ[:PER_KIND]]
    return out


def midpoint_search() -> tuple[int, int]:
    """Search the reference method's whole input space for rounding midpoints.

    Every distinct adjusted score (float32, and the same in float64) times every K times every
    rating difference in [-100000, 100000]: returns how many ``K * (score - expected)`` lie within
    1e-9 of a half-integer (a midpoint up to the rounding of ``rating + ...`` at |rating| <= 50000,
    whose grid is 2**-37), and how many round differently with the float64 score. Independent of
    the project's code: numpy float32 emulates C#'s float.
    """
    f = np.float32
    scores: set[tuple[float, float]] = set()
    for won, c16, c24, c4, bad in itertools.product((True, False), range(5), range(4), range(5), range(17)):
        for t in (f, float):
            mult = t(1) if won else t(0.1)
            bonus = (
                min(t(c16) * t(0.05), t(0.15)) + min(t(c24) * t(0.1), t(0.2)) + min(t(c4) * t(0.03), t(0.09))
            ) * mult
            value = (t(1) if won else t(0)) + bonus - min(t(bad) * t(0.02), t(0.3))
            clamped = float(min(max(value, t(0)), t(1)))
            if t is f:
                s32 = clamped
            else:
                scores.add((s32, clamped))
    d = np.arange(-100_000, 100_001, dtype=np.float64)
    expected = 1.0 / (1.0 + np.power(10.0, d / 400.0))
    near = flips = 0
    for s32, s64 in sorted(scores):
        for k in (40, 32, 24, 16):
            v = k * (s32 - expected)
            near += int((np.abs(v - np.floor(v) - 0.5) < 1e-9).sum())
            flips += int((np.floor(v + 0.5) != np.floor(k * (s64 - expected) + 0.5)).sum())
    return near, flips


def _changed(cases: Sequence[Case], base: Sequence[tuple[int, int]], *variants: str) -> int:
    other = csharp.Oracle(csharp.build(*variants)).rate_many(cases)
    return sum(x != y for x, y in zip(base, other, strict=True))


def _readme(table: list[str], search: tuple[int, int], n_disc: dict[str, int]) -> str:
    return README.format(
        table="\n".join(table),
        near=search[0],
        flips=search[1],
        n_ref=n_disc["reference"],
        n_odd=n_disc["odd_k"],
        odd_k="/".join(map(str, csharp.ODD_K)),
    )


def main(argv: list[str]) -> int:
    reason = csharp.mono_missing()
    if reason:
        print(f"error: {reason}", file=sys.stderr)
        return 2
    verbatim = csharp.Oracle(csharp.build())
    odd = csharp.Oracle(csharp.build("odd_k"))
    files: dict[str, str] = {}

    ref_cases = read_cases(GOLDEN / "reference_vectors.csv")
    ref_out = verbatim.rate_many(ref_cases)
    files["reference_vectors.csv"] = _csv(
        INPUTS + OUTPUTS, [_row(c, o) for c, o in zip(ref_cases, ref_out, strict=True)]
    )

    structured = _reference_cases()
    odd_cases = _odd_k_cases()
    s_out = verbatim.rate_many([c for _, c in structured])
    o_out = odd.rate_many([c for _, c in odd_cases])
    disc = [["reference", kind, *_row(c, o)] for (kind, c), o in zip(structured, s_out, strict=True)]
    disc += [["odd_k", kind, *_row(c, o)] for (kind, c), o in zip(odd_cases, o_out, strict=True)]
    files["discriminating_vectors.csv"] = _csv(["rules", "case", *INPUTS, *OUTPUTS], disc)

    s_cases = [c for _, c in structured]
    o_cases = [c for _, c in odd_cases]
    table = [
        "| wrong arithmetic (a change to the C# method) | reference_vectors.csv (3,000) "
        f"| discriminating, reference ({len(s_cases)}) | discriminating, odd K ({len(o_cases)}) |",
        "|---|---|---|---|",
    ]
    for variant in WRONG:
        what = csharp.VARIANTS[variant][0]
        table.append(
            f"| `{variant}`: {what} | {_changed(ref_cases, ref_out, variant)} "
            f"| {_changed(s_cases, s_out, variant)} | {_changed(o_cases, o_out, 'odd_k', variant)} |"
        )
    search = midpoint_search()
    files["README.md"] = _readme(table, search, {"reference": len(s_cases), "odd_k": len(o_cases)})

    stale = (
        [name for name, text in files.items() if (GOLDEN / name).read_text(encoding="utf-8") != text]
        if (all((GOLDEN / n).is_file() for n in files))
        else list(files)
    )
    if "--check" in argv:
        print("up to date" if not stale else f"would change: {', '.join(stale)}")
        return 1 if stale else 0
    for name, text in files.items():
        (GOLDEN / name).write_text(text, encoding="utf-8")
    print(f"wrote {', '.join(files)} in {GOLDEN} (changed: {', '.join(stale) or 'none'})")
    return 0


README = """\
# Golden vectors: the seed post's C# method, compiled and run

Generated by `python scripts/make_golden.py` (`--check` verifies without writing; needs Mono:
`bash scripts/ensure-mono.sh`). Do not edit these files by hand.

## Provenance

- The method: `CalculateNewRatings` and `GetKFactor` exactly as the makers' post prints them
  (`shared/seeds/*.txt`, the same bytes in all five languages), extracted by
  `scripts/extract_csharp_method.py` into `tests/oracle/seed_method.cs`.
- Compiled with Debian's Mono C# compiler (`mcs`, package mono-mcs) inside
  `tests/oracle/Harness.cs`, which supplies Unity's `Mathf.Min` (`a < b ? a : b`) and `Mathf.Clamp`
  (the lower bound tested first), and run with `mono` (package mono-runtime).
- `reference_vectors.csv`: the 3,000 inputs of the shared reference vectors
  (`shared/golden/reference_vectors.csv`); the results are recomputed by the compiled method and
  equal the shared file's row for row.
- `discriminating_vectors.csv`: column `rules` is `reference` (the method as published) or `odd_k`
  (the same method with K = {odd_k} instead of 40/32/24/16, the Python rules
  `REFERENCE_RULES.replace(k_tiers=..., k_top=17)`); column `case` says why the row is there:
  - reference ({n_ref} rows): `k_edge` (both ratings on or beside 1200/1800/2200), `equal_ratings`
    (expected score exactly 0.5), `caps` (one count at 0..4, 14..17, 100, 1,000,000),
    `clamp` (adjusted scores clamped to 1 and to 0), `limits` (ratings of +-50,000 and +-49,999;
    the files hold the C# results, some beyond +-50,000, where the port holds the rating at the
    limit: `docs/rules.md`, "The rating range", and `tests/oracle/golden.py` `within_range`);
  - odd K ({n_odd} rows): `midpoint` (the new rating is exactly x.5 before rounding, so half-up and
    half-to-even differ) and `float32` (the float32 score and a float64 one round to different
    ratings), the first {per_kind} of each found among 400,000 seeded random cases
    (`tests/oracle/cases.py`).

## Which rows tell the arithmetic apart

How many rows change when the C# method itself is changed in one place (each variant is compiled
from the method's text with that one change, `tests/oracle/csharp.py`):

{table}

The reference method cannot tell float32 from float64 or half-up from half-to-even, on any input:
`midpoint_search()` in the script runs every distinct adjusted score (float32 and float64) with
every K and every rating difference in [-100,000, 100,000]: {near} values of
`K * (score - expected)` lie within 1e-9 of a half-integer and {flips} round differently with the
float64 score. Those two choices of the port are therefore pinned by the odd-K rows, on which the
Python rules `arithmetic = "float64"` and `rounding = "half_up"` give the same results as the
correspondingly changed C# method (`tests/oracle/test_golden.py`).
""".replace("{per_kind}", str(PER_KIND))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
