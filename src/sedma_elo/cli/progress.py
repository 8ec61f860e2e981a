"""The one progress bar of the long commands (replay, import, re-rate, verify): rich, on stderr."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

__all__ = ["ProgressBar", "show_progress"]


def show_progress(flag: bool | None) -> bool:
    """Whether to draw a bar: the ``--progress/--no-progress`` flag, else only when stderr is a terminal."""
    return sys.stderr.isatty() if flag is None else flag


class ProgressBar:
    """A rich progress bar on stderr (one line a phase), or nothing when ``show`` is false.

    Use as a context manager; :meth:`phase` starts a new line, :meth:`update` (``done``, ``total``,
    both counts of items) moves it. Its methods cost almost nothing when hidden, so callers pass
    :meth:`update` as a callback unconditionally.
    """

    def __init__(self, show: bool) -> None:
        self.show = show
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        if self.show:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self._bar.start()
        return self

    def phase(self, name: str, total: int | None = None) -> None:
        """End the current line (shown complete) and start one named ``name``."""
        if self._bar is not None:
            if self._task is not None:
                self._bar.update(self._task, total=1, completed=1)
            self._task = self._bar.add_task(name, total=total)

    def update(self, done: int, total: int | None = None) -> None:
        """Set the current line to ``done`` of ``total`` (``None`` keeps the total)."""
        if self._bar is not None and self._task is not None:
            if total is None:
                self._bar.update(self._task, completed=done)
            else:
                self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
