"""Mutation testing (mutmut 3) of the parts where a one-line bug costs most, one target at a time.

Usage: python scripts/mutation.py [TARGET ...] [--keep]

Each target names a module, the functions of it to mutate (mutmut mutant-name globs) and the tests
that guard them. A target runs in its own copy of the project in a temporary directory (mutmut
writes its ``mutants/`` tree and cache there, never into the repository), under ``nice``, with one
test process (``--max-children 1``): the machines this runs on are shared. Prints every mutant's
status and a score per target: killed / (killed + survived); timeouts count as killed, mutants
no test reaches ("no tests") as survived. A target none of whose names matches a mutant (a function
renamed or moved) is an error (exit status 1). ``--keep`` leaves the copies for ``mutmut show``.

``make mutation`` runs every target (tens of minutes on two cores).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    module: str  # path under src/
    functions: tuple[str, ...]  # mutmut names without the module prefix, globs allowed
    tests: tuple[str, ...]


TARGETS = {
    "engine": Target(
        "sedma_elo/core/engine.py",
        ("x__rate_single__mutmut_*",),
        ("tests/core/test_engine.py", "tests/core/test_rate_edges.py", "tests/oracle/test_golden.py"),
    ),
    "formula": Target(
        "sedma_elo/core/formula.py",
        tuple(
            f"x_{f}__mutmut_*"
            for f in ("f32", "k_factor", "compute_score", "expected_score", "round_rating", "clamp_rating")
        ),
        (
            "tests/core/test_engine.py",
            "tests/core/test_rate_edges.py",
            "tests/core/test_variants.py",
            "tests/oracle/test_golden.py",
        ),
    ),
    "kernel": Target(
        "sedma_elo/batch/kernel.py",
        ("x_kernel_params__mutmut_*",),
        ("tests/batch/test_kernel.py", "tests/oracle/test_golden.py", "tests/core/test_rate_edges.py"),
    ),
    "ledger": Target(
        "sedma_elo/service/ledger/batch.py",
        ("x__repeat_or_conflict__mutmut_*", "xǁBatchǁ*__mutmut_*"),
        ("tests/service/test_exactly_once.py", "tests/service/test_api.py"),
    ),
    "game": Target(
        "sedma_elo/game/state.py",
        ("xǁRoundStateǁresult__mutmut_*",),
        ("tests/game/test_round_result.py", "tests/game/test_state.py"),
    ),
    "split": Target(
        "sedma_elo/analysis/metrics.py",
        ("x_chronological_split__mutmut_*",),
        ("tests/analysis/test_metrics.py", "tests/analysis/test_no_lookahead.py"),
    ),
}

_STATUS = re.compile(r"^\s*(\S+): (.+)$")


def _workdir(target: Target) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="sedma-elo-mutation-"))
    for folder in ("src", "tests", "docs", "scripts"):
        shutil.copytree(ROOT / folder, tmp / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    tests = ", ".join(f'"{t}"' for t in target.tests)
    config = (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        'also_copy = ["docs", "scripts"]\n'
        f'only_mutate = ["src/{target.module}"]\n'
        f"pytest_add_cli_args_test_selection = [{tests}]\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]\n'
    )
    (tmp / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + config)
    return tmp


def run(name: str, target: Target, keep: bool) -> tuple[int, int, list[str]]:
    """Run one target; return (killed, survived, the surviving mutants' names)."""
    work = _workdir(target)
    prefix = target.module.removesuffix(".py").replace("/", ".") + "."
    names = [prefix + f for f in target.functions]
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    # CI=true: derandomized hypothesis, so a verdict is repeatable. PYTHONPATH: mutmut runs the tests
    # in mutants/, and its src/ must win over the editable install's path to the real src/.
    env = {**os.environ, "CI": "true", "PYTHONPATH": "src"}
    # The copy lives in the temp directory, away from the shared data the tests find beside the
    # repository (tests/needs.py); under CI=true a test that misses it fails.
    shared = next((f / "shared" for f in ROOT.parents if (f / "shared").is_dir()), None)
    if shared is not None:
        env.setdefault("SEDMA_SHARED_DIR", str(shared))
    try:
        subprocess.run(
            ["nice", "-n", "10", mutmut, "run", "--max-children", "1", *names], cwd=work, env=env, check=False
        )
        done = subprocess.run(
            [mutmut, "results", "--all", "true"], cwd=work, env=env, capture_output=True, text=True
        )
        statuses: dict[str, str] = {}
        for line in done.stdout.splitlines():
            m = _STATUS.match(line)
            if m and m.group(2).strip() != "not checked":  # the module's other functions
                statuses[m.group(1)] = m.group(2).strip()
        killed = sum(s in ("killed", "timeout") for s in statuses.values())
        survivors = sorted(n for n, s in statuses.items() if s in ("survived", "no tests"))
        print(f"\n== {name}: {target.module}")
        for mutant, status in sorted(statuses.items()):
            print(f"   {mutant}: {status}")
        total = killed + len(survivors)
        score = f"{100 * killed / total:.1f}%" if total else "-"
        print(f"== {name}: killed {killed} of {total} ({score}); survived: {len(survivors)}")
        if not total:
            print(
                f"error: no mutant of {target.module} matches {target.functions} (renamed?)", file=sys.stderr
            )
        if keep:
            print(f"   (copy kept in {work}: cd there and run mutmut show NAME)")
        return killed, len(survivors), survivors
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    chosen = [a for a in argv if not a.startswith("--")] or list(TARGETS)
    unknown = [c for c in chosen if c not in TARGETS]
    if unknown:
        print(f"error: unknown target(s) {unknown}; known: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    totals = [run(name, TARGETS[name], keep) for name in chosen]
    killed = sum(k for k, _, _ in totals)
    survived = sum(s for _, s, _ in totals)
    print(f"\nall targets: killed {killed} of {killed + survived}")
    return 1 if any(k + s == 0 for k, s, _ in totals) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
