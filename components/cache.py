"""The one caching layer between pages and core.

Models and per-model tables live in ``st.cache_resource`` (one copy shared by all sessions, never
mutated). Every per-input result (the tokens and analysis of each input, and each page's results
built on them) lives in a ``results_cache``: shared, read-only, keyed on an ``InputKey`` first,
and bounded by the bytes it holds (serving/budget.py), so memory stays within its budget
however long the sentences a class types.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, ParamSpec, TypeVar

import streamlit as st

from components.input_key import InputKey
from core.errors import ModelLoadError
from core.settings import DEFAULT_MODEL, MAX_MODELS
from core.tokenizer_files import TokenizerFiles, read_files
from core.tokens import Encoding, encode
from serving import budget
from serving.models import load_model

# torch, transformers and the model's code are imported by the first model load or run, not with
# this module: a fresh server's first page shows its tokens from the tokenizer's files
# (get_encoding) while the model loads (bench/HISTORY.md: cold start).
if TYPE_CHECKING:
    import numpy as np

    from core import Analysis, ModelBundle

T = TypeVar("T")
P = ParamSpec("P")
# Importing this module sets nothing process-wide: glibc's allocator settings and the sweep's
# clean-up of ended sessions are the server's, made once as it starts (frame/startup.py,
# prepare_process), not a notebook's or a test's that imports the cache layer.

# The embedded model plus BERT_EXPLORER_MAX_MODELS others (default 2: bert-base-chinese and
# bert-base-uncased side by side, ~0.9 GB). Per-model tables elsewhere are sized by this too.
MODEL_CACHE_ENTRIES = 1 + MAX_MODELS


def get_model(name: str) -> ModelBundle:
    """The loaded model, shared by every session. Raises ModelLoadError (not cached).

    ``name`` is the name ``core.settings.allowed_name`` gave (a folder by its resolved path). The
    default model has a cache of its own, so no other model can push it out. A hub model must be
    on this machine already (``core.models.needs_download`` is False): its download runs in the
    background (components.model_download), never inside a page's run.
    """
    return _default_model() if name == DEFAULT_MODEL else _other_model(name)


@st.cache_resource(max_entries=1, show_spinner="Loading the model…")
def _default_model() -> ModelBundle:
    return _loaded(DEFAULT_MODEL)


# Streamlit's resource cache is an LRU cache (its own TTLCache): when full, the least recently used
# model is dropped first. Two sessions asking for one model at once load it once (a lock per key).
@st.cache_resource(max_entries=MAX_MODELS, show_spinner="Loading the model…")
def _other_model(name: str) -> ModelBundle:
    return _loaded(name)


def _loaded(name: str) -> ModelBundle:
    bundle = load_model(name)
    # torch, transformers and the model leave ~500k long-lived objects that every full garbage
    # collection would walk (~250 ms, holding the GIL). Freezing them keeps Python's own
    # collections cheap; Streamlit's per-rerun full collection is off in .streamlit/config.toml.
    gc.freeze()
    _READY.add(name)
    return bundle


# The models whose load has finished in this process (the default one is never evicted; another
# evicted from its cache is loaded again by the next get_model, as before).
_READY: set[str] = set()


def model_ready(name: str) -> bool:
    """Whether ``name``'s model has loaded: get_model then answers at once."""
    return name in _READY


def loading_default(name: str) -> bool:
    """Whether ``name`` is the default model and it has not loaded yet: a page then shows
    what the tokenizer's files give (``get_tokenizer_files``) and waits for the model only
    where it needs it (the server's warm-up is loading it, frame/startup.py)."""
    return name == DEFAULT_MODEL and not model_ready(name)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def get_tokenizer_files(name: str) -> TokenizerFiles:
    """``name``'s tokenizer and sizes read from its files (core.tokenizer_files): milliseconds,
    and no torch. Raises ModelLoadError (not cached) for a model not on this machine."""
    return read_files(name)


def model_limit(name: str) -> int:
    """The model's position table's length (the longest input), from config.json while the
    model loads."""
    if model_ready(name):
        return get_model(name).config.max_position_embeddings
    try:
        return get_tokenizer_files(name).config.max_position_embeddings
    except ModelLoadError:
        return get_model(name).config.max_position_embeddings


class CachedFunction(Generic[P, T]):
    """A function whose results live in a byte-bounded ``ResultStore`` (``serving.budget``).

    Called as the function it wraps (same parameters, same result type, so a type checker sees
    through it); ``.store`` is its store (hits, misses, bytes held, ``key in store``) and
    ``.clear()`` empties it. Made by ``results_cache``; tests/test_page_shape.py finds a page's
    caches as instances of this class.
    """

    def __init__(self, fn: Callable[P, T], store: budget.ResultStore, *,
                 keyed: bool = True, unkeyed: tuple[str, ...] = ()) -> None:
        """``keyed=False``: ``fn`` reads and fills ``store`` itself (get_analysis, two stores
        behind one function); it is called as it is. ``unkeyed``: parameters left out of the
        key (a progress callback: it changes how a miss reports, not what it returns)."""
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._signature = inspect.signature(fn)
        self._keyed = keyed
        self._unkeyed = frozenset(unkeyed)
        assert self._unkeyed <= set(self._signature.parameters), unkeyed
        self.store = store

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        if not self._keyed:
            return self._fn(*args, **kwargs)
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if self._unkeyed:
            key = tuple(v for n, v in bound.arguments.items() if n not in self._unkeyed)
        else:   # keyword-only arguments are part of the key too (bound.kwargs holds only those)
            key = (*bound.args, *sorted(bound.kwargs.items())) if bound.kwargs else bound.args
        return self.store.get_or_compute(key, lambda: self._fn(*bound.args, **bound.kwargs))

    def clear(self) -> None:
        """Forget every result (tests; the store's bytes go back to the budget)."""
        self.store.clear()


def results_cache(name: str, share: float, heavy: bool = True, unkeyed: tuple[str, ...] = (),
                  ) -> Callable[[Callable[P, T]], CachedFunction[P, T]]:
    """A cache of per-input results bounded by the bytes they hold (``serving.budget``).

    Keyed on the bound arguments, defaults filled in, so ``f(key, attentions=False)`` and
    ``f(key)`` share one entry; the first argument is an ``InputKey``. ``share`` is this cache's
    part of the whole results budget. A hit hands back the one shared result (no unpickled copy
    on every rerun of every page) in microseconds, where Streamlit's own cache spends ~0.2 ms
    hashing the arguments and bounds only the number of entries, while one entry at 512 tokens
    holds 55-90 MB. Results must never be mutated. ``heavy=False`` for results cheap to compute
    (the tokenizer's), which need not queue for a compute slot behind model runs. ``unkeyed``
    names parameters that are not part of the key (a progress callback).
    """
    def decorate(fn: Callable[P, T]) -> CachedFunction[P, T]:
        return CachedFunction(fn, budget.ResultStore(name, share, heavy), unkeyed=unkeyed)

    return decorate


@results_cache("encodings", share=0.05, heavy=False)
def get_encoding(key: InputKey) -> Encoding:
    """The tokenizer's output alone, for views that need no model run (tokens, shapes, marks).

    Raises InputError (not cached) for text it cannot tokenise, exactly as get_analysis does.
    Before the model has loaded, the tokenizer's files give the same Encoding
    (tests/test_tokenizer_files.py), so a first page shows its tokens without waiting.
    """
    source: ModelBundle | TokenizerFiles
    if model_ready(key.model):
        source = get_model(key.model)
    else:
        try:
            source = get_tokenizer_files(key.model)
        except ModelLoadError:   # not readable alone: the model's loading says why
            source = get_model(key.model)
    return encode(source, key.text_a, key.text_b, key.max_length, key.truncation, key.padding)


# An analysis without attention weights (~9 MB at 512 tokens) is what most views read; the
# weights (layers x heads x T x T, 75 MB at 512 tokens) have a cache of their own, so an input's
# stages are kept once however it was asked for, and weights too large for their share are
# computed for the open view and not kept. Views built on the weights cache what they reduce
# them to (the head atlas of an input: a few KB).
_ANALYSES = budget.ResultStore("analyses", share=0.35)
_ATTENTIONS = budget.ResultStore("attention weights", share=0.15)


def _analysis(key: InputKey, attentions: bool = False) -> Analysis:
    """Every stage for one input, its arrays read-only so sessions can share it; with
    ``attentions``, every layer's attention weights too.

    The tokens come from ``get_encoding``, so an input is tokenised once for both caches. Raises
    InputError (not cached) for text it cannot analyse.
    """
    if not attentions:
        return _ANALYSES.get_or_compute(key, lambda: _analyzed(key, attentions=False))
    weights = _ATTENTIONS.get_or_compute(key, lambda: _attention_weights(key))
    return dataclasses.replace(_analysis(key), attentions=weights)


get_analysis = CachedFunction(_analysis, _ANALYSES, keyed=False)


def _attention_weights(key: InputKey) -> np.ndarray:
    """One forward pass with the weights; its stages fill the analyses cache if they are not
    there, so asking for the weights first costs no second run."""
    full = _analyzed(key, attentions=True)
    _ANALYSES.put(key, dataclasses.replace(full, attentions=None))
    return full.attention_weights()


def _analyzed(key: InputKey, attentions: bool) -> Analysis:
    from core import analyze_encoding

    encoding = get_encoding(key)
    with st.spinner("Running the model…"):  # only a miss gets here
        result = analyze_encoding(get_model(key.model), encoding, attentions=attentions)
    return result.read_only()


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def parameter_count(model_name: str) -> int:
    """``sum(p.numel())`` over the loaded model: the one count Home and Parameters show."""
    from core.parameters.listing import model_counts

    total, _trainable = model_counts(get_model(model_name).model)
    return total
