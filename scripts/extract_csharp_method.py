"""Extract the seed post's C# method (CalculateNewRatings + GetKFactor) verbatim.

Usage: python scripts/extract_csharp_method.py [SEEDS_DIR] [--check]

Reads every ``*.txt`` post in SEEDS_DIR (default: ``$SEDMA_SEEDS_DIR`` or ``../shared/seeds`` beside
the repository), cuts the text from ``public static void CalculateNewRatings(`` to the closing
brace of ``GetKFactor``, checks that all posts carry the same bytes, and writes them to
``tests/oracle/seed_method.cs`` (``--check``: exit 1 if that file differs instead of writing).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "tests" / "oracle" / "seed_method.cs"
START = "public static void CalculateNewRatings("
END = "private static int GetKFactor(int rating)"


def extract(text: str) -> str:
    """The method text of one post: from START to the ``}`` line closing GetKFactor."""
    begin = text.index(START)
    tail = text.index(END, begin)
    close = text.index("\n}", tail) + 2
    return text[begin:close] + "\n"


def seeds_dir(argv: list[str]) -> Path:
    given = [a for a in argv if not a.startswith("--")]
    if given:
        return Path(given[0])
    return Path(os.environ.get("SEDMA_SEEDS_DIR") or ROOT.parent / "shared" / "seeds")


def main(argv: list[str]) -> int:
    folder = seeds_dir(argv)
    posts = sorted(folder.glob("*.txt"))
    if not posts:
        print(f"error: no seed posts (*.txt) in {folder}", file=sys.stderr)
        return 2
    methods = {p.name: extract(p.read_text(encoding="utf-8")) for p in posts}
    if len(set(methods.values())) != 1:
        print(f"error: the posts carry different methods: {sorted(methods)}", file=sys.stderr)
        return 1
    method = next(iter(methods.values()))
    if "--check" in argv:
        same = TARGET.read_text(encoding="utf-8") == method
        print(f"{TARGET.name}: {'identical to' if same else 'DIFFERS from'} {len(posts)} posts in {folder}")
        return 0 if same else 1
    TARGET.write_text(method, encoding="utf-8")
    print(f"wrote {TARGET} from {len(posts)} identical posts")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
