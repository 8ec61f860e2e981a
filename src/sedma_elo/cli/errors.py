"""How every command reports a user error: ``error: <message>`` on stderr and a non-zero exit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from ..errors import SedmaEloError

__all__ = ["fail", "user_errors"]


def fail(message: object, code: int = 2) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise (status ``code``).

    Plain text, not rich markup: messages quote user input (``stats.a[1]``, ``[bold]``...) that
    must print as given.
    """
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@contextmanager
def user_errors(prefix: str = "", code: int = 2) -> Iterator[None]:
    """Turn the project's errors raised inside into :func:`fail` (``prefix`` goes before the message)."""
    try:
        yield
    except SedmaEloError as exc:
        raise fail(f"{prefix}{exc}", code) from None
