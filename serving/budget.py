"""Memory budgets for the caches of per-input results, in bytes.

The whole server should stay within ``BERT_EXPLORER_MEMORY_MB`` (default 1200) with the models it
has loaded. What Python, torch, Streamlit and the embedded model hold is roughly fixed; the
per-input results are what grows with a class's long texts (at 512 tokens an analysis with every
attention is ~85 MB, one layer's encoder steps ~55 MB). So they get a budget of their own,
``BERT_EXPLORER_CACHE_MB`` (by default the memory goal less what the server holds without them
and less the working memory of the results being computed and the sessions' open views),
split between the caches by their ``share``; one accountant keeps the sum of all of them within
that budget, dropping the least recently used entry of the fullest cache first. An entry larger
than its cache's budget is computed and shown but not kept.

Under load, three more things keep the process's memory near what the caches hold:

- One computation per key at a time: sessions asking for the same input while it is computed
  wait for that one result instead of computing (and holding) their own copies.
- At most ``BERT_EXPLORER_COMPUTE_SLOTS`` (default 2, this machine's cores) results computed
  at once, whatever the number of sessions: each holds its working arrays until it is done
  (hundreds of MB at 512 tokens), and more at once only queue for the same cores.
- Entries nobody has used for ``BERT_EXPLORER_CACHE_IDLE_S`` seconds (default 30) are dropped
  down to ``BERT_EXPLORER_CACHE_REST_MB`` (default 16) once a class has gone: a hit on a long
  text that waited longer costs one recomputation (about a second at 512 tokens).
- glibc is set (``tune_malloc``, called once by the server's start-up, frame/startup.py; importing
  this module or the cache layer sets nothing) to serve every allocation of 256 KB or
  more by its own ``mmap`` (so a freed array goes back to the system at once, instead of glibc's
  threshold rising to the largest array freed and later arrays landing in heaps that never
  shrink; a 512-token row of hidden states is 768 KB) and to at most two arenas (one per core,
  not eight per core); after entries are dropped, and whenever the free bytes in its heaps have
  grown by TRIM_SLACK since the last time, it is asked to give the freed pages back
  (``malloc_trim``). Environment variables glibc reads itself (``MALLOC_ARENA_MAX``,
  ``MALLOC_MMAP_THRESHOLD_``) take precedence. Measured: bench/HISTORY.md.

Sizes are the arrays' ``nbytes`` summed over a result (``size_of``), as cachetools'
``getsizeof`` asks; a view counts the whole array it keeps alive, once.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import cachetools

T = TypeVar("T")
_LOG = logging.getLogger(__name__)
MB = 1024 * 1024
# What the server holds with the embedded model loaded and every page imported, before any
# per-input result (measured here: 0.72 GB RSS after visiting every page, bench/long_text.py;
# 0.70 GB before the model's weights were read whole at load, core.models.read_every_weight).
BASELINE_MB = 720
# Besides the caches: the results being computed (two at once, hundreds of MB each at 512
# tokens), each open session's view (its figures, and the arrays its download buttons hold) and
# the allocator's slack. Measured (bench/long_text.py, 30 sessions with 512-token pairs, one run
# each, the same machine and load): with 250 MB of caches the server peaked at 1.30 GB, with
# 150 MB at 1.18 GB; so 350 MB is kept for this. With the model's weights read whole at load
# (20 MB more in the baseline, pages a class used to read in later) the caches get 130 MB.
WORKING_MB = 350
SWEEP_S = 5.0   # how often idle entries are looked for (and the heap's free pages trimmed)
SWEEPER = "results-cache-sweeper"   # the sweeper thread's name
# Free heap bytes left to glibc between sweeps. Measured under load (30 sessions on 512-token
# pairs): 175-240 MB of the heap was free, yet resident, because only an eviction led to a trim.
TRIM_SLACK = 32 * MB
MMAP_THRESHOLD = 256 * 1024   # allocations this large get their own mmap, unmapped when freed
ARENAS = 2


def memory_goal_mb() -> int:
    return int(os.environ.get("BERT_EXPLORER_MEMORY_MB", "1200"))


def results_budget_bytes() -> int:
    """Bytes all per-input caches together may hold: by default what the memory goal leaves
    beside the baseline and the working memory (130 MB for the default 1200)."""
    default = max(64, memory_goal_mb() - BASELINE_MB - WORKING_MB)
    return int(float(os.environ.get("BERT_EXPLORER_CACHE_MB", default)) * MB)


def idle_seconds() -> float:
    """An entry unused this long may be dropped (while the caches hold more than at rest)."""
    return float(os.environ.get("BERT_EXPLORER_CACHE_IDLE_S", "30"))


def rest_bytes() -> int:
    """What the caches may keep however long they are idle: the short texts of the last class."""
    return int(float(os.environ.get("BERT_EXPLORER_CACHE_REST_MB", "16")) * MB)


def size_of(value: Any, _seen: set[int] | None = None) -> int:
    """The bytes a cached result holds: its arrays' and tensors' ``nbytes`` summed, walking
    dataclasses, named tuples, lists, dicts and data frames; each object counted once, and a
    numpy view as the whole array it keeps alive."""
    seen = set() if _seen is None else _seen
    np: Any = sys.modules.get("numpy")   # as imported: 0.1 s before a server's first answer
    array = np is not None and isinstance(value, np.ndarray)
    if array:
        while isinstance(value.base, np.ndarray):   # a view keeps its base alive
            value = value.base
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if array:
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


def compute_slots() -> int:
    return max(1, int(os.environ.get("BERT_EXPLORER_COMPUTE_SLOTS", "2")))


class _Slots:
    """At most ``compute_slots()`` results computed at once, across every store and session.

    Re-entrant per thread: a computation that needs another result (the encoder steps need the
    analysis) computes it in the slot it holds. A thread takes its slot before it claims a key,
    so whoever owns a computation others wait for always holds a slot and goes on.
    """

    def __init__(self) -> None:
        self._semaphore = threading.BoundedSemaphore(compute_slots())
        self._held = threading.local()

    def __enter__(self) -> None:
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            self._semaphore.acquire()
        self._held.depth = depth + 1

    def __exit__(self, *exc: object) -> None:
        self._held.depth -= 1
        if self._held.depth == 0:
            self._semaphore.release()


_SLOTS = _Slots()


class _TimedLRU(cachetools.LRUCache):
    """cachetools' LRU bounded by ``getsizeof``, remembering when each entry was last used."""

    def __init__(self, maxsize: int, getsizeof: Callable[[Any], int]) -> None:
        super().__init__(maxsize, getsizeof=getsizeof)
        self.used: dict[Hashable, float] = {}
        self.evictions = 0

    def __getitem__(self, key: Hashable) -> Any:
        value = super().__getitem__(key)
        self.used[key] = time.monotonic()
        return value

    def __setitem__(self, key: Hashable, value: Any) -> None:
        super().__setitem__(key, value)
        self.used[key] = time.monotonic()

    def __delitem__(self, key: Hashable) -> None:
        super().__delitem__(key)
        self.used.pop(key, None)

    def popitem(self) -> tuple[Hashable, Any]:   # cachetools' own evictions come here too
        item = super().popitem()
        self.evictions += 1
        return item

    def clear(self) -> None:
        super().clear()
        self.used.clear()


@dataclasses.dataclass
class _Flight:
    """One computation under way, that other sessions asking for the same key wait for."""
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    value: Any = None
    error: Exception | None = None
    finished: bool = False   # False after done: it was interrupted (a rerun), compute anew


class ResultStore:
    """One cache of per-input results: an LRU bounded by bytes, safe across sessions' threads."""

    def __init__(self, name: str, share: float, heavy: bool = True) -> None:
        self.name = name
        self.share = share
        self.heavy = heavy   # computed in one of the few compute slots (False: the tokenizer's)
        self._lock = threading.Lock()
        self.hits = self.misses = self.waits = 0
        self._lru = _TimedLRU(max(1, int(results_budget_bytes() * share)), size_of)
        self._flights: dict[Hashable, _Flight] = {}
        _ACCOUNTANT.register(self)

    @property
    def budget(self) -> int:
        return int(self._lru.maxsize)

    @property
    def bytes_held(self) -> int:
        return int(self._lru.currsize)

    @property
    def evictions(self) -> int:
        return self._lru.evictions

    def __len__(self) -> int:
        return len(self._lru)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._lru

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value of ``key``, else ``compute()``'s, kept if it fits. While one thread
        computes a key, others asking for it wait and share its result (or its error)."""
        while True:
            with self._lock:
                found = self._lru.get(key, _MISSING)
                if found is not _MISSING:
                    self.hits += 1
                    return found
                flight = self._flights.get(key)
            if flight is None:
                with _SLOTS if self.heavy else contextlib.nullcontext():
                    with self._lock:   # look again: it may have been computed meanwhile
                        found = self._lru.get(key, _MISSING)
                        if found is not _MISSING:
                            self.hits += 1
                            return found
                        flight = self._flights.get(key)
                        mine = flight is None
                        if flight is None:
                            flight = self._flights[key] = _Flight()
                            self.misses += 1
                    if mine:
                        return self._compute(key, compute, flight)
            with self._lock:
                self.waits += 1
            flight.done.wait()
            if flight.finished:
                if flight.error is not None:
                    raise flight.error
                return flight.value
            # The computing session was stopped by its own rerun: this one computes instead.

    def _compute(self, key: Hashable, compute: Callable[[], T], flight: _Flight) -> T:
        try:
            # Outside the lock: other inputs' hits need not wait for a model run.
            value = compute()
        except Exception as exc:   # e.g. InputError: the same for everyone who waits
            flight.error, flight.finished = exc, True
            raise
        else:
            flight.value, flight.finished = value, True
            self.put(key, value)
            return value
        finally:   # a BaseException (Streamlit's rerun or stop) leaves finished False
            with self._lock:
                self._flights.pop(key, None)
            flight.done.set()

    def put(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` under ``key`` unless it is there already or larger than the budget."""
        with self._lock:
            if key in self._lru:
                return
            try:
                self._lru[key] = value
            except ValueError:   # larger than this cache's whole budget: shown, not kept
                return
        _ACCOUNTANT.enforce()

    def oldest_use(self) -> float | None:
        """When the least recently used entry was last used (time.monotonic), None if empty."""
        with self._lock:
            return min(self._lru.used.values(), default=None)

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
    """Keeps every store's bytes summed within the one budget for all of them, drops idle
    entries, and hands freed memory back to the system."""

    def __init__(self) -> None:
        self.stores: list[ResultStore] = []
        self._lock = threading.Lock()
        self._dropped = threading.Event()   # something was evicted since the last trim
        self._sweeper: threading.Thread | None = None
        self._stop = threading.Event()
        self.trims = 0
        self._free_at_trim = 0   # heap_free_bytes() at the last trim
        # Called on every sweep; each returns how many things it let go (components.cache
        # registers Streamlit's leftovers of ended sessions).
        self.sweep_hooks: list[Callable[[], int]] = []

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
                self._dropped.set()
        self._start_sweeper()

    def sweep(self, now: float | None = None) -> int:
        """Drop entries idle longer than ``idle_seconds()``, oldest first, while the caches hold
        more than ``rest_bytes()``. Returns how many were dropped."""
        now = time.monotonic() if now is None else now
        idle, rest, dropped = idle_seconds(), rest_bytes(), 0
        with self._lock:
            while self.total() > rest:
                ages = [(used, store) for store in self.stores
                        if (used := store.oldest_use()) is not None]
                if not ages:
                    break
                used, store = min(ages, key=lambda age: age[0])
                if now - used < idle or not store.evict_oldest():
                    break
                dropped += 1
        if dropped:
            self._dropped.set()
        return dropped

    def trim(self) -> bool:
        """Give freed heap pages back to the system if anything was dropped since last time, or
        if the heap's free bytes grew by TRIM_SLACK since the last trim (under load: the arrays
        of finished runs; glibc counts trimmed pages as free too, hence the growth)."""
        free = heap_free_bytes()
        self._free_at_trim = min(self._free_at_trim, free)   # reused since: a lower baseline
        if not self._dropped.is_set() and free - self._free_at_trim <= TRIM_SLACK:
            return False
        self._free_at_trim = free
        self._dropped.clear()
        self.trims += 1
        return malloc_trim()

    # The sweeper stays a thread of its own, not a check made on cache use nor a serving.jobs
    # job: what it is for is the quiet after a class has gone, when no session uses a cache (so
    # a check on use would never run) and the idle entries, the ended sessions' download
    # callables and the heap's free pages are still held; and a job that never ends would keep
    # one of the job pool's few workers from downloads and many-pairs jobs for good. It starts
    # with the first cached result (never at import), sleeps between sweeps and takes no lock
    # while it sleeps; ``stop_sweeper`` ends it (tests).
    def _start_sweeper(self) -> None:
        if self._sweeper is None:
            with self._lock:
                if self._sweeper is None:
                    self._stop = threading.Event()   # this sweeper's own
                    self._sweeper = threading.Thread(target=self._sweep_forever,
                                                     args=(self._stop,), name=SWEEPER,
                                                     daemon=True)
                    self._sweeper.start()

    def stop_sweeper(self) -> None:
        """End the sweeper thread (it starts again with the next cached result)."""
        with self._lock:
            sweeper, self._sweeper = self._sweeper, None
            self._stop.set()
        if sweeper is not None:
            sweeper.join()

    def _sweep_forever(self, stop: threading.Event) -> None:
        while not stop.wait(SWEEP_S):
            try:
                if self.sweep() + sum(hook() for hook in self.sweep_hooks):
                    # Quiet time (idle entries, ended sessions): also collect the cycles that
                    # hold arrays (an interrupted run's traceback and its frames), which no
                    # collection after each script run frees (.streamlit/config.toml).
                    gc.collect()
                    self._dropped.set()
                self.trim()
            except Exception:  # noqa: BLE001 - logged; the sweeper must live: the next sweep tries again
                _LOG.exception("the results-cache sweep failed")


def _libc() -> Any:
    """glibc, or None elsewhere (musl, macOS): nothing to tune or trim there."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return libc if libc is not None and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_LIBC = _libc()   # found once: find_library runs a compiler or ldconfig to look
_MALLOC_TRIM = getattr(_LIBC, "malloc_trim", None)


M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8   # mallopt's parameters, from glibc's malloc.h


def tune_malloc() -> dict[str, int]:
    """Set glibc's mmap threshold and arena count (see the module's docstring) unless the
    environment sets them; returns what was set. Process-wide: the server calls it once as it
    starts (frame/startup.py, prepare_process), never a notebook by importing serving."""
    libc = _LIBC
    if libc is None:
        return {}
    done = {}
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ and libc.mallopt(M_MMAP_THRESHOLD,
                                                                  MMAP_THRESHOLD):
        done["mmap_threshold"] = MMAP_THRESHOLD
    if "MALLOC_ARENA_MAX" not in os.environ and libc.mallopt(M_ARENA_MAX, ARENAS):
        done["arena_max"] = ARENAS
    return done


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33 and later)."""
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _mallinfo2() -> Any:
    function = getattr(_LIBC, "mallinfo2", None)
    if function is not None:
        function.restype = _MallInfo2
    return function


_MALLINFO2 = _mallinfo2()


def heap_free_bytes() -> int:
    """Bytes free inside glibc's heaps (``mallinfo2().fordblks``): resident until trimmed.
    0 where glibc is older than 2.33 or absent."""
    return int(_MALLINFO2().fordblks) if _MALLINFO2 is not None else 0


def malloc_trim() -> bool:
    """glibc's ``malloc_trim(0)``: return free memory at the top and in the middle of every
    arena to the system. False where there is no glibc."""
    return bool(_MALLOC_TRIM is not None and _MALLOC_TRIM(0))


_MISSING = object()
_ACCOUNTANT = _Accountant()


def stores() -> list[ResultStore]:
    """Every per-input cache, for the bench and the tests."""
    return list(_ACCOUNTANT.stores)


def on_sweep(hook: Callable[[], int]) -> None:
    """Run ``hook`` on every sweep; a positive return (things let go) triggers a trim."""
    _ACCOUNTANT.sweep_hooks.append(hook)


def stop_sweeper() -> None:
    """End the results-cache sweeper thread (tests: no thread is left after them)."""
    _ACCOUNTANT.stop_sweeper()


def total_bytes() -> int:
    return _ACCOUNTANT.total()


def clear_all() -> None:
    for store in stores():
        store.clear()
