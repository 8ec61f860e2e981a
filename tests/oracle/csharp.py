"""The seed post's C# method compiled with Mono and run as a test oracle.

:func:`build` composes ``Harness.cs`` with ``seed_method.cs`` (the method exactly as the post prints
it) and compiles it with ``mcs``; a *variant* applies one deliberate change to the method's text
first (float64 arithmetic, half-up rounding...), so the golden vectors can show which rows tell the
arithmetic apart. :class:`Oracle` runs the compiled program: every batch of cases goes through ONE
Mono process (stdin to stdout).

When Mono is missing, :func:`require_mono` fails the test under ``CI=true`` (``make test`` installs
it with ``scripts/ensure-mono.sh``) and skips it elsewhere, naming the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED_METHOD = HERE / "seed_method.cs"
HARNESS = HERE / "Harness.cs"
MARKER = "//@@SEED_METHOD@@"

#: One case: the C# method's 11 arguments in its order (player_a_won as a bool).
Case = tuple[int, int, bool, int, int, int, int, int, int, int, int]


def _float64(src: str) -> str:
    src = re.sub(r"\bfloat\b", "double", src)
    return re.sub(r"\b(\d+(?:\.\d+)?)f\b", r"\1", src)


def _round_with(replacement: str) -> Callable[[str], str]:
    def apply(src: str) -> str:
        out = re.sub(
            r"\(int\)Math\.Round\((rating[AB] \+ k[AB] \* \(adjustedScore[AB] - expected[AB]\))\)",
            lambda m: replacement.format(m.group(1)),
            src,
        )
        assert out != src, "rounding pattern not found"
        return out

    return apply


def _k_inclusive(src: str) -> str:
    out = re.sub(r"if \(rating < (\d+)\)", r"if (rating <= \1)", src)
    assert out.count("<=") == 3
    return out


#: The K values of the "odd_k" variant (tiers below 1200, 1800, 2200, then the top).
ODD_K = (41, 33, 25, 17)


def _odd_k(src: str) -> str:
    out = src
    for old, new in zip((40, 32, 24, 16), ODD_K, strict=True):
        out = out.replace(f"return {old};", f"return {new};")
    assert out.count("return") - src.count("return") == 0 and out != src
    return out


def _clamp_unbounded(src: str) -> str:
    out = src.replace("Mathf.Clamp(baseScoreA + bonusA - malusA, 0f, 1f)", "(baseScoreA + bonusA - malusA)")
    out = out.replace("Mathf.Clamp(baseScoreB + bonusB - malusB, 0f, 1f)", "(baseScoreB + bonusB - malusB)")
    assert out != src
    return out


#: Variants of the method: name -> (what the change is, the change applied to the method's text).
VARIANTS: dict[str, tuple[str, Callable[[str], str]]] = {
    "float64": ("every float (bonus, malus, score) computed in double instead", _float64),
    "half_up": (
        "Math.Floor(x + 0.5) instead of Math.Round(x) (half up, not half to even)",
        _round_with("(int)Math.Floor({0} + 0.5)"),
    ),
    "away_from_zero": (
        "Math.Round(x, MidpointRounding.AwayFromZero)",
        _round_with("(int)Math.Round({0}, MidpointRounding.AwayFromZero)"),
    ),
    "truncate": ("(int)x instead of (int)Math.Round(x)", _round_with("(int)({0})")),
    "k_tiers_inclusive": ("rating <= 1200/1800/2200 instead of < in GetKFactor", _k_inclusive),
    "no_clamp": ("the adjusted score not clamped to [0, 1]", _clamp_unbounded),
    "odd_k": ("K = 41/33/25/17 instead of 40/32/24/16 (a rule set whose exact ties are midpoints)", _odd_k),
}


def mono_missing() -> str | None:
    """Why the oracle cannot run here (``mcs`` or ``mono`` not on PATH), or None."""
    missing = [tool for tool in ("mcs", "mono") if shutil.which(tool) is None]
    if missing:
        tools = " and ".join(missing)
        return f"{tools} not found (Debian packages mono-mcs, mono-runtime: run scripts/ensure-mono.sh)"
    return None


def require_mono() -> None:
    """Fail under ``CI=true`` when Mono is missing, skip with the reason elsewhere."""
    from needs import unavailable

    reason = mono_missing()
    if reason is not None:
        unavailable(f"the C# oracle cannot run: {reason}")


def source(*variants: str) -> str:
    """The harness with the seed method inserted, changed by each of ``variants`` in turn."""
    method = SEED_METHOD.read_text(encoding="utf-8")
    for variant in variants:
        method = VARIANTS[variant][1](method)
    harness = HARNESS.read_text(encoding="utf-8")
    assert harness.count(MARKER) == 1
    return harness.replace(MARKER, method)


def build(*variants: str, folder: Path | None = None) -> Path:
    """Compile the oracle (changed by ``variants``, none: verbatim) with ``mcs``; return the ``.exe``.

    The program is cached in ``folder`` (default: the system temp directory) under the hash of its
    source, so a second build of unchanged sources is instant.
    """
    text = source(*variants)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = folder or Path(tempfile.gettempdir()) / "sedma-elo-oracle"
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / f"oracle-{'+'.join(variants) or 'verbatim'}-{digest}.exe"
    if not exe.is_file():
        cs = exe.with_suffix(".cs")
        cs.write_text(text, encoding="utf-8")
        partial = exe.with_suffix(f".{os.getpid()}.tmp")
        done = subprocess.run(
            ["mcs", "-nologo", "-optimize+", "-target:exe", f"-out:{partial}", str(cs)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"mcs failed for {cs}:\n{done.stdout}{done.stderr}")
        partial.replace(exe)  # atomic: parallel builds of the same source do not see half a file
    return exe


class Oracle:
    """A compiled oracle program; each call runs one Mono process."""

    def __init__(self, exe: Path) -> None:
        self.exe = exe

    def rate_many(self, cases: Sequence[Case]) -> list[tuple[int, int]]:
        """The method's ``(ratingA, ratingB)`` after each case, in order, from one Mono process."""
        lines = "".join(f"{ra} {rb} {int(won)} {' '.join(map(str, rest))}\n" for ra, rb, won, *rest in cases)
        out = self._run(["batch"], lines)
        rows = [tuple(map(int, line.split())) for line in out.splitlines()]
        if len(rows) != len(cases):
            raise RuntimeError(f"oracle returned {len(rows)} results for {len(cases)} cases")
        return rows  # type: ignore[return-value]

    def replay(self, path: Path, initial_rating: int) -> tuple[dict[str, int], int]:
        """A C# loop calling the method over the history file: final ratings by player id, and how
        many rows it left out because a player plays themself."""
        out = self._run(["replay", str(path), str(initial_rating)], "")
        first, *rest = out.splitlines()
        left_out = int(first.removeprefix("#self_play\t"))
        return {pid: int(r) for pid, r in (line.split("\t") for line in rest)}, left_out

    def _run(self, args: Iterable[str], stdin: str) -> str:
        done = subprocess.run(
            ["mono", str(self.exe), *args], input=stdin, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"oracle {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done.stdout
