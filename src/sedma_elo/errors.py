"""The project's exceptions: one base class and a short tree.

::

    SedmaEloError                  base of everything raised on purpose
    +-- ValidationError(ValueError) bad input; names the field (and line or move)
    |   +-- RulesError              a rules file or rules object is invalid
    |   +-- HistoryError            a match-history file has a bad row
    |   +-- GameRecordError         a game record is malformed or illegal
    +-- ConflictError               the same id was used for different content
    +-- NotFoundError               a requested player, match or version is unknown
    +-- DatabaseError               the database does not exist or cannot be reached
    +-- AuthError                   a missing or wrong API key
    |   +-- PermissionDeniedError   a valid key without the needed scope
    +-- RateLimitError              a key sent more requests than its rate limit allows
    +-- UnavailableError            the service cannot take the request now (overload, a stall)
        +-- StorageUnavailableError the database cannot store or answer now (disk full, connection lost)

Only the API edge maps these to HTTP status codes; the library never imports the web layer.
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "ConflictError",
    "DatabaseError",
    "GameRecordError",
    "HistoryError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "RulesError",
    "SedmaEloError",
    "StorageUnavailableError",
    "UnavailableError",
    "ValidationError",
]


def _rebuilt(cls: type[SedmaEloError], args: tuple[object, ...], state: dict[str, object]) -> SedmaEloError:
    """``cls`` with ``args`` and attributes ``state``, without calling its ``__init__`` (unpickling)."""
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class SedmaEloError(Exception):
    """Base class of every error the project raises on purpose.

    Every error pickles with its message and attributes (the writer process sends its outcomes to
    the API process that way), whatever arguments its ``__init__`` takes.
    """

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return _rebuilt, (type(self), self.args, dict(self.__dict__))


class ValidationError(SedmaEloError, ValueError):
    """Bad input. ``field`` names the offending field; ``line`` the 1-based line of a file.

    The message always starts with the location, e.g. ``line 12: won_by_16_a: must be >= 0``.
    """

    def __init__(self, field: str, message: str, *, line: int | None = None) -> None:
        self.field = field
        self.reason = message
        self.line = line
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{field}: {message}")

    def at_line(self, line: int) -> ValidationError:
        """Return a copy of this error located at ``line`` of a file (same class)."""
        err = type(self).__new__(type(self))
        ValidationError.__init__(err, self.field, self.reason, line=line)
        return err


class RulesError(ValidationError):
    """A rules file or rules object is invalid; ``field`` is the dotted TOML key."""


class HistoryError(ValidationError):
    """A match-history file has a bad row; ``line`` is its 1-based line number."""


class GameRecordError(ValidationError):
    """A game record is malformed or contains an illegal move; ``field`` names the move."""


class ConflictError(SedmaEloError):
    """The same identifier was submitted again with different content."""


class NotFoundError(SedmaEloError):
    """A requested player, match, key or ratings version does not exist."""


class AuthError(SedmaEloError):
    """No API key, or a key that is unknown or revoked."""


class PermissionDeniedError(AuthError):
    """A valid API key whose scope does not allow the request."""


class DatabaseError(SedmaEloError):
    """The database named by a URL does not exist, cannot be created or cannot be reached."""


class RateLimitError(SedmaEloError):
    """Too many requests for one API key; ``retry_after`` is the wait in seconds before a retry."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class UnavailableError(SedmaEloError):
    """The service cannot take the request now (a full write queue, a write that took too long).

    ``retry_after`` is the suggested wait in seconds. A write answered so may or may not have been
    applied: repeating it with the same ``match_id`` and body is safe and tells.
    """

    def __init__(self, message: str, *, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class StorageUnavailableError(UnavailableError):
    """The database cannot store or answer now: a full disk, a lost or refused connection.

    ``kind`` names the failure (``"disk full"``, ``"connection lost"``...) so that logs can count
    failures by kind. Nothing was stored by the request that met it (the transaction rolled
    back); repeating it later is safe.
    """

    def __init__(self, message: str, *, kind: str, retry_after: float = 5.0) -> None:
        self.kind = kind
        super().__init__(message, retry_after=retry_after)
