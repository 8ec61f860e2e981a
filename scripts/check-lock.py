"""Check that requirements/*.txt pin every dependency of pyproject.toml within its range.

``make`` runs it right after installing the lock: a dependency added to pyproject.toml without
``make lock`` (or a range the pinned version no longer meets) stops there with the command to run.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.MULTILINE)


def problems() -> list[str]:
    """One line per dependency of pyproject.toml that a lock file misses or pins out of range."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = [Requirement(r) for r in project["dependencies"]]
    dev = [Requirement(r) for r in project["optional-dependencies"]["dev"]]
    found = []
    locks = {"requirements/runtime.txt": runtime, "requirements/dev.txt": runtime + dev}
    for lock, requirements in locks.items():
        path = ROOT / lock
        if not path.is_file():
            found.append(f"{lock} is missing")
            continue
        pins = {canonicalize_name(name): version for name, version in PIN.findall(path.read_text())}
        for req in requirements:
            if req.marker is not None and not req.marker.evaluate():
                continue
            pinned = pins.get(canonicalize_name(req.name))
            if pinned is None:
                found.append(f"{lock} does not pin {req.name} (pyproject.toml: {str(req)!r})")
            elif not req.specifier.contains(pinned, prereleases=True):
                found.append(f"{lock} pins {req.name}=={pinned}, outside pyproject.toml's {str(req)!r}")
    return found


def main() -> int:
    found = problems()
    for line in found:
        print(f"error: {line}", file=sys.stderr)
    if found:
        print("error: the lock files are behind pyproject.toml: run `make lock`", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
