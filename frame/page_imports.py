"""Importing a page's modules, one thread at a time (the router and the warm-up both do it)."""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

_IMPORT_LOCK = threading.Lock()


def import_page(folder: str) -> ModuleType:
    """Import ``pages.<folder>.page`` (and so everything it needs), one thread at a time.

    A class opening links at once on a fresh server had two sessions import scikit-learn in two
    threads; the second saw a partly initialised ``sklearn.base`` (ImportError, an exception box
    on /positions). Python's per-module import locks do not cover that cycle; this lock does.
    The router imports the page it is about to run, so a first visit to /tokens does not wait
    for the pages that need scikit-learn.
    """
    with _IMPORT_LOCK:
        return importlib.import_module(f"pages.{folder}.page")
