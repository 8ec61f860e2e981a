"""How every command reports a user error: ``error: <message>`` on stderr and exit status 2.

Commands raise :func:`fail` (or let a project error out of :func:`user_errors`). Whatever still
leaves a command is caught once, by :class:`CliGroup` (the ``sedma-elo`` group): command-line
mistakes click finds (an unknown option, a value not among the choices), the project's errors,
files that cannot be read or written, and a database that cannot be reached all end as one
``error:`` line with status 2, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

from ..errors import SedmaEloError

__all__ = ["CliGroup", "fail", "os_error_message", "user_errors"]


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


def os_error_message(exc: OSError) -> str:
    """``cannot open <file>: <reason>`` for an error of the operating system."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return reason
    return f"cannot open {exc.filename}: {reason}"


def _database_message(exc: BaseException) -> str | None:
    """The message of a database driver's error (via SQLAlchemy), or None for anything else."""
    if not type(exc).__module__.startswith("sqlalchemy"):
        return None
    from ..storage.database import database_error

    return str(database_error(exc))


class CliGroup(TyperGroup):
    """The ``sedma-elo`` command group: the one place where errors become ``error: ...`` lines."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; in standalone mode (the console script) exit with its status."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except TyperException as exc:  # click's errors: usage (status 2), a bad file argument...
            # typer validates choices through pydantic, which prefixes its own label.
            message, code = exc.format_message().replace("Value error, ", ""), exc.exit_code
            if message:  # empty after the help a bare group prints (no_args_is_help)
                context = getattr(exc, "ctx", None)
                hint = f" (see '{context.command_path} --help')" if context is not None else ""
                _report(f"{message}{hint}", code)
        except typer.Abort:
            typer.echo("Aborted.", err=True)
            code = 1
        except SedmaEloError as exc:
            code = _report(exc, 2)
        except OSError as exc:
            code = _report(os_error_message(exc), 2)
        except Exception as exc:
            database = _database_message(exc)
            if database is None:
                raise
            code = _report(database, 2)
        sys.exit(code if isinstance(code, int) else 0)


def _report(message: object, code: int) -> int:
    typer.echo(f"error: {message}", err=True)
    return code
