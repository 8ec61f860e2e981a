"""Opening the ledger a command works on: one place for the checks every ledger command makes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..service.ledger import Ledger

__all__ = ["create_database", "open_ledger"]


@contextmanager
def open_ledger(url: str | None, *, create: bool = False) -> Iterator[Ledger]:
    """The ledger on ``url`` (schema upgraded, first version created), closed afterwards.

    Only commands that set a ledger up pass ``create``: the others refuse a SQLite file that does
    not exist (a mistyped path must not give an empty ledger and "0 matches: all equal").

    Raises:
        ValidationError: the URL is unusable. DatabaseError: the database does not exist (or,
            with ``create``, cannot be created) or cannot be reached.
    """
    from sqlalchemy.exc import DBAPIError

    from ..service.ledger import Ledger
    from ..storage.database import database_error, open_checked

    ledger = Ledger(open_checked(url, create=create))
    try:
        try:
            ledger.ensure_version()
        except DBAPIError as exc:
            raise database_error(exc, url) from None
        yield ledger
    finally:
        ledger.db.dispose()


def create_database(url: str | None) -> None:
    """Create the database (a SQLite file) and its schema if they do not exist yet."""
    from ..storage.database import open_checked

    open_checked(url, create=True).dispose()
