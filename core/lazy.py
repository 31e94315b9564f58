"""A package's names imported from their modules when first asked for (PEP 562).

``core`` and ``core.similarity`` list what they offer (``from core import analyze`` works as
ever) without importing every module behind them when the package is imported: the app's first
page and the server's warm-up need only the model's modules (``core.models``, ``core.analysis``,
``core.tokens``), and importing the package pulled in scipy.stats and scikit-learn for the
attribution, similarity and contexts code, most of a second of a fresh server's start
(bench/cold_start_bench.py). A type checker reads the package's ``TYPE_CHECKING`` imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(namespace: dict[str, Any], modules: Mapping[str, tuple[str, ...]],
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: each name of ``modules`` (module -> names)
    is imported from its module on first use and kept in ``namespace`` (the package's
    globals()), so later lookups are plain attributes."""
    where = {name: module for module, names in modules.items() for name in names}
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module-level hook's own name
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__
