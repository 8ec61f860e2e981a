"""The public API is defined once, in ``sedma_elo.__init__``, and no exported name shadows a module."""

from __future__ import annotations

import pkgutil
import types

import sedma_elo


def test_all_is_sorted_and_unique() -> None:
    """``__all__`` lists each name once, in sorted order (constants first, as ruff sorts it)."""
    names = sedma_elo.__all__
    assert len(names) == len(set(names))
    assert names == sorted(names, key=lambda n: (not n.isupper(), n[0].islower(), n))


def test_every_exported_name_resolves() -> None:
    """Each name in ``__all__`` is an attribute of the package."""
    missing = [n for n in sedma_elo.__all__ if not hasattr(sedma_elo, n)]
    assert missing == []


def test_every_public_attribute_is_exported() -> None:
    """A public, non-module attribute of the package appears in ``__all__`` (nothing leaks by accident)."""
    public = {
        name
        for name, value in vars(sedma_elo).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert sorted(public - set(sedma_elo.__all__)) == []


def test_no_exported_name_is_also_a_submodule() -> None:
    """``import sedma_elo.X`` and ``sedma_elo.X`` never disagree: no export is named like a submodule."""
    submodules = {m.name for m in pkgutil.iter_modules(sedma_elo.__path__)}
    assert sorted(submodules & set(sedma_elo.__all__)) == []
