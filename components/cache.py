"""The one caching layer between pages and core.

Models and per-model tables live in ``st.cache_resource`` (one copy shared by all sessions, never
mutated); the analysis and the tokens of each input in a bounded LRU of shared, read-only
results (``shared_results``); smaller per-input results in ``st.cache_data``. Keys are plain
strings, ints and bools, and every cache is bounded so memory levels off however many sentences
a class types.
"""

from __future__ import annotations

import functools
import gc
import inspect
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from core import (
    DEFAULT_MODEL,
    Analysis,
    Encoding,
    ModelBundle,
    analyze_encoding,
    encode,
    load_model,
)
from core.parameters.listing import model_counts

T = TypeVar("T")

MODEL_CACHE_ENTRIES = 2       # the default model plus one other, at most ~1.5 GB for bert-large
ANALYSIS_CACHE_ENTRIES = 24   # a 512-token result is ~10 MB of float32; 24 keep it under 250 MB


def get_model(name: str) -> ModelBundle:
    """The loaded model, shared by every session. Raises ModelLoadError (not cached).

    ``name`` is the name ``core.settings.allowed_name`` gave (a folder by its resolved path). The
    default model has a cache of its own, so no other model can push it out.
    """
    return _default_model() if name == DEFAULT_MODEL else _other_model(name)


@st.cache_resource(max_entries=1, show_spinner="Loading the model…")
def _default_model() -> ModelBundle:
    return _loaded(DEFAULT_MODEL)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES - 1, show_spinner="Loading the model…")
def _other_model(name: str) -> ModelBundle:
    return _loaded(name)


def _loaded(name: str) -> ModelBundle:
    bundle = load_model(name)
    # torch, transformers and the model leave ~500k long-lived objects that every full garbage
    # collection would walk (~250 ms, holding the GIL). Freezing them keeps Python's own
    # collections cheap; Streamlit's per-rerun full collection is off in .streamlit/config.toml.
    gc.freeze()
    return bundle


def shared_results(maxsize: int) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``functools.lru_cache`` keyed on the bound arguments, defaults filled in.

    Rather than st.cache_data / st.cache_resource: a hit hands back the one shared result (no
    unpickled copy, 9 MB for a 512-token analysis, on every rerun of every page) in microseconds,
    where Streamlit's cache spends ~0.2 ms hashing the arguments, 2% of a short sentence's whole
    analysis. Binding first means ``f(x, max_length=None)`` and ``f(x)`` share one entry, so pages
    that spell a call differently still share one result. Results must never be mutated.
    """
    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: object, **kwargs: object) -> T:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return cached(*bound.args)

        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return call

    return decorate


@shared_results(maxsize=ANALYSIS_CACHE_ENTRIES)
def get_encoding(
    model_name: str,
    text_a: str,
    text_b: str | None,
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
) -> Encoding:
    """The tokenizer's output alone, for views that need no model run (tokens, shapes, marks).

    Raises InputError (not cached) for text it cannot tokenise, exactly as get_analysis does.
    """
    return encode(get_model(model_name), text_a, text_b, max_length, truncation,
                  pad_to_max_length)


@shared_results(maxsize=ANALYSIS_CACHE_ENTRIES)
def get_analysis(
    model_name: str,
    text_a: str,
    text_b: str | None,
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
    attentions: bool = False,
) -> Analysis:
    """Every stage for one input, its arrays read-only so sessions can share it.

    The tokens come from ``get_encoding``, so an input is tokenised once for both caches. Raises
    InputError (not cached) for text it cannot analyse.
    """
    encoding = get_encoding(model_name, text_a, text_b, max_length, truncation,
                            pad_to_max_length)
    with st.spinner("Running the model…"):  # only a miss gets here
        result = analyze_encoding(get_model(model_name), encoding, attentions=attentions)
    return result.read_only()


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def parameter_count(model_name: str) -> int:
    """``sum(p.numel())`` over the loaded model: the one count Home and Parameters show."""
    total, _trainable = model_counts(get_model(model_name).model)
    return total
