"""The project's errors cross a process boundary whole (the writer process pickles its outcomes)."""

from __future__ import annotations

import pickle

import pytest

from sedma_elo import errors


def _all_errors() -> list[type[errors.SedmaEloError]]:
    found: list[type[errors.SedmaEloError]] = []
    todo: list[type[errors.SedmaEloError]] = [errors.SedmaEloError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def _example(cls: type[errors.SedmaEloError]) -> errors.SedmaEloError:
    if issubclass(cls, errors.StorageUnavailableError):
        return cls("the disk is full", kind="disk full", retry_after=7.5)
    if issubclass(cls, (errors.UnavailableError, errors.RateLimitError)):
        return cls("try later", retry_after=2.5)
    if issubclass(cls, errors.ValidationError):
        return cls("won_by_16_a", "must be >= 0", line=12)
    return cls("some message")


@pytest.mark.parametrize("cls", _all_errors(), ids=lambda c: c.__name__)
def test_every_error_pickles_with_its_message_and_attributes(cls: type[errors.SedmaEloError]) -> None:
    """An error unpickled is of the same class, with the same message and the same attributes."""
    err = _example(cls)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls
    assert str(back) == str(err)
    assert back.args == err.args
    assert vars(back) == vars(err)


def test_a_located_validation_error_keeps_its_line() -> None:
    """ValidationError's field, reason and line survive the trip (its __init__ takes other arguments)."""
    back = pickle.loads(pickle.dumps(errors.HistoryError("winner", "must be a or b", line=3)))
    assert (back.field, back.reason, back.line, str(back)) == (
        "winner",
        "must be a or b",
        3,
        "line 3: winner: must be a or b",
    )
