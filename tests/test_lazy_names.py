"""The packages whose names are imported lazily (core/lazy.py) list each name three times: an
import under ``TYPE_CHECKING`` (what a type checker reads), the table given to ``lazy_names``
(what runs) and ``__all__`` (what ``from core import *`` and the docs take). The three name the
same set, every name imports, and it is the very object its ``TYPE_CHECKING`` import names.

Every package under core/ that calls ``lazy_names`` is checked, found by reading its source.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT


@dataclass(frozen=True)
class Lists:
    type_checking: dict[str, str]   # name -> module it is imported from for a type checker
    table: dict[str, str]           # name -> module lazy_names imports it from
    all_: tuple[str, ...]           # __all__, in order


def _is_type_checking(test: ast.expr, negated: bool) -> bool:
    if negated:
        return (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
                and _is_type_checking(test.operand, False))
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def read_lists(source: str) -> Lists:
    """The three lists of a package's ``__init__.py``, read from its syntax tree."""
    tree = ast.parse(source)
    type_checking: dict[str, str] = {}
    table: dict[str, str] = {}
    all_: tuple[str, ...] = ()
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node.test, negated=False):
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.unparse(imp)
                for alias in imp.names:
                    type_checking[alias.asname or alias.name] = imp.module
        elif isinstance(node, ast.If) and _is_type_checking(node.test, negated=True):
            for call in ast.walk(node):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                        and call.func.id == "lazy_names"):
                    modules = ast.literal_eval(call.args[1])
                    for module, names in modules.items():
                        for name in names:
                            assert name not in table, f"{name} listed twice in the table"
                            table[name] = module
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            all_ = tuple(ast.literal_eval(node.value))
    return Lists(type_checking, table, all_)


def lazy_packages() -> list[str]:
    """Every package under core/ whose ``__init__.py`` calls ``lazy_names``."""
    found = []
    for init in sorted((ROOT / "core").rglob("__init__.py")):
        if "__pycache__" in init.parts:
            continue
        if "lazy_names(" in init.read_text(encoding="utf-8"):
            found.append(".".join(init.parent.relative_to(ROOT).parts))
    return found


PACKAGES = lazy_packages()


def _lists(package: str) -> Lists:
    path = ROOT / Path(*package.split(".")) / "__init__.py"
    return read_lists(path.read_text(encoding="utf-8"))


def test_the_packages_are_found():
    assert {"core", "core.similarity"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_three_lists_name_the_same_names(package):
    lists = _lists(package)
    assert lists.table, f"{package}: no lazy_names table read"
    checking, table, all_ = set(lists.type_checking), set(lists.table), set(lists.all_)
    assert len(all_) == len(lists.all_), (
        f"{package}.__all__ lists a name twice: "
        f"{sorted(n for n in all_ if lists.all_.count(n) > 1)}")
    assert checking == table, (f"{package}: TYPE_CHECKING imports only {sorted(checking - table)}"
                               f", lazy_names table only {sorted(table - checking)}")
    assert all_ == table, (f"{package}: __all__ only {sorted(all_ - table)}, "
                           f"lazy_names table only {sorted(table - all_)}")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_imports_as_the_type_checker_reads_it(package):
    """Each name comes through the package's lazy ``__getattr__``, and is the object its
    ``TYPE_CHECKING`` import names (the table may name the package that re-exports it)."""
    lists = _lists(package)
    module = importlib.import_module(package)
    for name in lists.table:
        value = getattr(module, name)
        expected = getattr(importlib.import_module(lists.type_checking[name]), name)
        assert value is expected, f"{package}.{name} is not {lists.type_checking[name]}.{name}"
        assert name in dir(module)


def test_the_reader_sees_a_disagreement():
    """The lists are read from the source, so a name missing from one of them is seen."""
    source = '''
from typing import TYPE_CHECKING
from core.lazy import lazy_names
if TYPE_CHECKING:
    from core.models import ModelBundle, load_model
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(globals(), {"core.models": ("ModelBundle",)})
__all__ = ["ModelBundle", "load_model", "load_model"]
'''
    lists = read_lists(source)
    assert lists.type_checking == {"ModelBundle": "core.models", "load_model": "core.models"}
    assert lists.table == {"ModelBundle": "core.models"}
    assert lists.all_ == ("ModelBundle", "load_model", "load_model")
