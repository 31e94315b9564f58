"""serving/budget.py: caches bounded by the bytes they hold, and right under concurrency.

Sizes are checked against numpy's own ``nbytes``; each test gets an accountant of its own, so the
app's caches (imported elsewhere in the test run) are neither counted nor evicted here.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from serving import budget

MB = budget.MB


@pytest.fixture
def accountant(monkeypatch) -> budget._Accountant:
    fresh = budget._Accountant()
    monkeypatch.setattr(budget, "_ACCOUNTANT", fresh)
    monkeypatch.setattr(fresh, "_start_sweeper", lambda: None)   # sweeps are called by hand
    return fresh


def cache_mb(monkeypatch, mb: float) -> None:
    monkeypatch.setenv("BERT_EXPLORER_CACHE_MB", str(mb))


def array_mb(mb: float, fill: float = 0.0) -> np.ndarray:
    return np.full(int(mb * MB) // 4, fill, dtype=np.float32)


@dataclasses.dataclass(frozen=True)
class Result:
    stages: dict[str, np.ndarray]
    weights: np.ndarray | None
    name: str


def test_size_of_sums_the_arrays_nbytes():
    a, b, w = np.ones((512, 384), np.float32), np.ones((512, 384)), np.ones((6, 12, 64, 64))
    result = Result({"x": a, "y": b}, w, "model")
    arrays = a.nbytes + b.nbytes + w.nbytes
    size = budget.size_of(result)
    assert arrays <= size <= arrays + 4096   # plus the few objects around them


def test_size_of_counts_an_array_once_and_a_view_as_its_base():
    base = np.ones((6, 12, 128, 128), np.float32)
    views = [base[k] for k in range(6)]   # per-layer views keep the whole array alive
    assert budget.size_of(views) - sys.getsizeof(views) == base.nbytes
    assert budget.size_of([base, base]) - sys.getsizeof([base, base]) == base.nbytes


def test_least_recently_used_goes_first(accountant, monkeypatch):
    cache_mb(monkeypatch, 10)
    store = budget.ResultStore("test", share=1.0)
    for key in "abc":
        store.get_or_compute(key, lambda: array_mb(3))
    store.get_or_compute("a", lambda: pytest.fail("a is cached"))   # a is now the most recent
    store.get_or_compute("d", lambda: array_mb(3))                    # 12 MB > 10 MB: b goes
    assert "b" not in store and all(k in store for k in "acd")
    assert store.bytes_held <= store.budget


def test_an_entry_larger_than_its_budget_is_returned_not_kept(accountant, monkeypatch):
    cache_mb(monkeypatch, 10)
    store = budget.ResultStore("test", share=0.5)   # 5 MB
    store.get_or_compute("small", lambda: array_mb(1))
    big = store.get_or_compute("big", lambda: array_mb(6, fill=2.0))
    assert big.nbytes == 6 * MB and float(big[0]) == 2.0
    assert "big" not in store and "small" in store


def test_the_accountant_keeps_all_stores_within_one_budget(accountant, monkeypatch):
    cache_mb(monkeypatch, 10)
    first, second = budget.ResultStore("first", 0.8), budget.ResultStore("second", 0.8)
    for key in range(2):
        first.get_or_compute(key, lambda: array_mb(3))      # first: 6 MB
    for key in range(2):
        second.get_or_compute(key, lambda: array_mb(2))     # second: 4 MB, total 10 MB
    assert budget.results_budget_bytes() - accountant.total() < MB   # full, not over
    second.get_or_compute(2, lambda: array_mb(2))           # 12 MB: the fullest store gives
    assert accountant.total() <= budget.results_budget_bytes()
    assert 0 not in first and 1 in first and len(second) == 3


def test_idle_entries_are_dropped_down_to_the_resting_size(accountant, monkeypatch):
    cache_mb(monkeypatch, 100)
    monkeypatch.setenv("BERT_EXPLORER_CACHE_REST_MB", "5")
    monkeypatch.setenv("BERT_EXPLORER_CACHE_IDLE_S", "30")
    store = budget.ResultStore("test", share=1.0)
    for key in range(5):
        store.get_or_compute(key, lambda: array_mb(2))
    assert accountant.sweep() == 0                     # just used: nothing is idle
    assert accountant.sweep(now=time.monotonic() + 31) == 3   # 10 MB down to 4 MB
    assert [k for k in range(5) if k in store] == [3, 4]       # the most recent stay
    assert accountant.trim() is True or budget._MALLOC_TRIM is None   # glibc gives pages back


def test_same_key_at_once_is_computed_once(accountant, monkeypatch):
    cache_mb(monkeypatch, 100)
    store = budget.ResultStore("test", share=1.0)
    calls, started = [], threading.Event()

    def compute():
        calls.append(1)
        started.set()
        time.sleep(0.3)
        return array_mb(1, fill=7.0)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: store.get_or_compute("k", compute), range(8)))
    assert len(calls) == 1
    assert all(r is results[0] for r in results)
    assert store.misses == 1 and store.hits + store.waits == 7


def test_an_error_reaches_everyone_waiting_and_is_not_kept(accountant, monkeypatch):
    cache_mb(monkeypatch, 100)
    store = budget.ResultStore("test", share=1.0)

    def compute():
        time.sleep(0.2)
        raise ValueError("bad input")

    def ask(_):
        try:
            store.get_or_compute("k", compute)
        except ValueError as exc:
            return str(exc)

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(ask, range(4))) == ["bad input"] * 4
    assert "k" not in store


def test_a_nested_computation_runs_in_the_slot_it_holds(accountant, monkeypatch):
    cache_mb(monkeypatch, 100)
    monkeypatch.setenv("BERT_EXPLORER_COMPUTE_SLOTS", "1")
    monkeypatch.setattr(budget, "_SLOTS", budget._Slots())   # one slot: a deadlock would hang
    inner, outer = budget.ResultStore("inner", 0.5), budget.ResultStore("outer", 0.5)
    done = []

    def work(i):
        value = outer.get_or_compute(i, lambda: inner.get_or_compute(i, lambda: i * 10) + 1)
        done.append(value)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert sorted(done) == [1, 11, 21, 31]


def test_evictions_never_hand_one_session_another_sessions_numbers(accountant, monkeypatch):
    # A budget of three entries, sixteen keys asked for by eight threads at once: every answer
    # must be its own key's, however often entries are evicted and recomputed in between.
    cache_mb(monkeypatch, 3.5)
    store = budget.ResultStore("test", share=1.0)
    keys = [(f"text {i}", i % 3 == 0) for i in range(16)]

    def compute(key):
        time.sleep(0.002)
        return array_mb(1, fill=float(keys.index(key)))

    def ask(job):
        key = keys[job % len(keys)]
        got = store.get_or_compute(key, lambda: compute(key))
        return float(got[0]) == keys.index(key) and float(got[-1]) == keys.index(key)

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(ask, range(400)))
    assert all(answers)
    assert store.evictions > 0 and store.bytes_held <= store.budget
