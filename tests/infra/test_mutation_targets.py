"""scripts/mutation.py's targets name functions that exist (a renamed one would silently drop out)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from fnmatch import fnmatchcase
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


TARGETS = _script().TARGETS


def _defined(path: Path) -> set[str]:
    """mutmut's names of the functions of ``path``: ``x_f`` for a function, ``xǁCǁm`` for a method."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(f"x_{node.name}")
        elif isinstance(node, ast.ClassDef):
            names |= {
                f"xǁ{node.name}ǁ{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
    return names


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_mutation_target_names_existing_functions_and_tests(name: str) -> None:
    """Each target's module and test files exist and each of its name patterns matches a function."""
    target = TARGETS[name]
    module = ROOT / "src" / target.module
    assert module.is_file(), target.module
    defined = _defined(module)
    for pattern in target.functions:
        base = pattern.removesuffix("__mutmut_*")
        assert any(fnmatchcase(d, base) for d in defined), f"{pattern} matches no function of {target.module}"
    assert [t for t in target.tests if not (ROOT / t).is_file()] == []
