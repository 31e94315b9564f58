"""Memory budgets for the caches of per-input results, in bytes.

The whole server should stay within ``BERT_EXPLORER_MEMORY_MB`` (default 1200) with the models it
has loaded. What Python, torch, Streamlit and the embedded model hold is roughly fixed; the
per-input results are what grows with a class's long texts (at 512 tokens an analysis with every
attention is ~90 MB, one layer's encoder steps ~55 MB). So they get a budget of their own,
``BERT_EXPLORER_CACHE_MB`` (by default the memory goal less what the server holds without them),
split between the caches by their ``share``; one accountant keeps the sum of all of them within
that budget, dropping the least recently used entry of the fullest cache first. An entry larger
than its cache's budget is computed and shown but not kept.

Sizes are the arrays' ``nbytes`` summed over a result (``size_of``), as cachetools'
``getsizeof`` asks.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import cachetools
import numpy as np

T = TypeVar("T")
MB = 1024 * 1024
# What the server holds with the embedded model loaded and every page imported, before any
# per-input result (measured here: 0.70-0.75 GB RSS after visiting every page).
BASELINE_MB = 800


def memory_goal_mb() -> int:
    return int(os.environ.get("BERT_EXPLORER_MEMORY_MB", "1200"))


def results_budget_bytes() -> int:
    """Bytes all per-input caches together may hold."""
    default = max(64, memory_goal_mb() - BASELINE_MB)
    return int(float(os.environ.get("BERT_EXPLORER_CACHE_MB", default)) * MB)


def size_of(value: Any, _seen: set[int] | None = None) -> int:
    """The bytes a cached result holds: its arrays' and tensors' ``nbytes`` summed, walking
    dataclasses, named tuples, lists, dicts and data frames; each object counted once."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if hasattr(value, "element_size") and hasattr(value, "nelement"):   # a torch tensor
        return int(value.element_size() * value.nelement())
    if hasattr(value, "memory_usage") and hasattr(value, "columns"):     # a pandas DataFrame
        return int(value.memory_usage(deep=True).sum())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sys.getsizeof(value) + sum(
            size_of(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(
            size_of(k, seen) + size_of(v, seen) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return sys.getsizeof(value) + sum(size_of(v, seen) for v in value)
    return sys.getsizeof(value)


class ResultStore:
    """One cache of per-input results: an LRU bounded by bytes, safe across sessions' threads."""

    def __init__(self, name: str, share: float) -> None:
        self.name = name
        self.share = share
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        self._lru: cachetools.LRUCache = cachetools.LRUCache(
            maxsize=max(1, int(results_budget_bytes() * share)), getsizeof=size_of)
        _ACCOUNTANT.register(self)

    @property
    def budget(self) -> int:
        return int(self._lru.maxsize)

    @property
    def bytes_held(self) -> int:
        return int(self._lru.currsize)

    def __len__(self) -> int:
        return len(self._lru)

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            found = self._lru.get(key, _MISSING)
            if found is _MISSING:
                self.misses += 1
            else:
                self.hits += 1
        if found is not _MISSING:
            return found
        value = compute()   # outside the lock: other inputs' hits need not wait for a model run
        with self._lock:
            try:
                self._lru[key] = value
            except ValueError:   # larger than this cache's whole budget: shown, not kept
                pass
        _ACCOUNTANT.enforce()
        return value

    def evict_oldest(self) -> bool:
        """Drop the least recently used entry; False when there was none."""
        with self._lock:
            if not self._lru:
                return False
            self._lru.popitem()
            return True

    def clear(self) -> None:
        with self._lock:
            self._lru.clear()


class _Accountant:
    """Keeps every store's bytes summed within the one budget for all of them."""

    def __init__(self) -> None:
        self.stores: list[ResultStore] = []
        self._lock = threading.Lock()

    def register(self, store: ResultStore) -> None:
        with self._lock:
            self.stores.append(store)

    def total(self) -> int:
        return sum(store.bytes_held for store in self.stores)

    def enforce(self) -> None:
        limit = results_budget_bytes()
        with self._lock:
            while self.total() > limit:
                fullest = max(self.stores, key=lambda store: store.bytes_held)
                if not fullest.evict_oldest():
                    break


_MISSING = object()
_ACCOUNTANT = _Accountant()


def stores() -> list[ResultStore]:
    """Every per-input cache, for the bench and the tests."""
    return list(_ACCOUNTANT.stores)


def total_bytes() -> int:
    return _ACCOUNTANT.total()


def clear_all() -> None:
    for store in stores():
        store.clear()
