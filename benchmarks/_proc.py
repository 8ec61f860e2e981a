"""Linux ``/proc`` readings shared by the benchmarks: a process's CPU time and its tree of processes."""

from __future__ import annotations

import contextlib
from pathlib import Path

__all__ = ["cpu_ticks", "descendants", "stat", "ticks"]


def stat(pid: int) -> tuple[str, list[str]]:
    """The command name of process ``pid`` and the fields of its ``/proc/PID/stat`` after the name
    (field 3 on: the state first).

    Raises:
        OSError: the process has ended (or is not there).
    """
    raw = Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.index("(") + 1 : raw.rindex(")")], raw.rsplit(")", 1)[1].split()


def cpu_ticks(pid: int) -> int:
    """User + system CPU clock ticks so far of process ``pid`` (all its threads; ``SC_CLK_TCK`` a second).

    Raises:
        OSError: the process has ended.
    """
    return ticks(stat(pid)[1])


def ticks(fields: list[str]) -> int:
    """User + system CPU clock ticks in the fields :func:`stat` returns (utime and stime)."""
    return int(fields[11]) + int(fields[12])


def descendants(root: int) -> set[int]:
    """``root`` and every live process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):  # ended meanwhile
                children.setdefault(int(stat(int(entry.name))[1][1]), []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found
