"""The one caching layer between pages and core.

Models and per-model tables live in ``st.cache_resource`` (one copy shared by all sessions, never
mutated); the analysis of each input in a bounded LRU of shared, read-only results (see
``_analysis``); smaller per-input results in ``st.cache_data``. Keys are plain strings, ints and
bools, and every cache is bounded so memory levels off however many sentences a class types.
"""

from __future__ import annotations

import functools
import gc

import streamlit as st

from core import Analysis, Encoding, ModelBundle, analyze, encode, load_model

MODEL_CACHE_ENTRIES = 2       # the default model plus one other, at most ~1.5 GB for bert-large
ANALYSIS_CACHE_ENTRIES = 24   # a 512-token result is ~10 MB of float32; 24 keep it under 250 MB


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner="Loading the model…")
def get_model(name: str) -> ModelBundle:
    """The loaded model, shared by every session. Raises ModelLoadError (not cached)."""
    bundle = load_model(name)
    # torch, transformers and the model leave ~500k long-lived objects that every full garbage
    # collection would walk (~250 ms, holding the GIL). Freezing them keeps Python's own
    # collections cheap; Streamlit's per-rerun full collection is off in .streamlit/config.toml.
    gc.freeze()
    return bundle


def get_analysis(
    model_name: str,
    text_a: str,
    text_b: str | None,
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
    attentions: bool = False,
) -> Analysis:
    """Every stage for one input. Raises InputError (not cached) for text it cannot analyse."""
    # One positional key however the caller spelled the arguments, so pages share one entry.
    return _analysis(model_name, text_a, text_b, max_length, truncation, pad_to_max_length,
                     attentions)


# An LRU of shared results rather than st.cache_data / st.cache_resource: a hit hands back the one
# result (no unpickled copy, 9 MB at 512 tokens, on every rerun of every page) in about a
# microsecond, where Streamlit's cache spends ~0.2 ms hashing the arguments, 2% of a short
# sentence's whole analysis. The arrays are read-only, so no page changes what another sees.
@functools.lru_cache(maxsize=ANALYSIS_CACHE_ENTRIES)
def _analysis(
    model_name: str,
    text_a: str,
    text_b: str | None,
    max_length: int | None,
    truncation: bool,
    pad_to_max_length: bool,
    attentions: bool,
) -> Analysis:
    bundle = get_model(model_name)
    with st.spinner("Running the model…"):  # only a miss gets here
        result = analyze(
            bundle,
            text_a,
            text_b,
            max_length=max_length,
            truncation=truncation,
            pad_to_max_length=pad_to_max_length,
            attentions=attentions,
        )
    return result.read_only()


@functools.lru_cache(maxsize=ANALYSIS_CACHE_ENTRIES)
def get_encoding(
    model_name: str,
    text_a: str,
    text_b: str | None,
    max_length: int | None,
    truncation: bool,
    pad_to_max_length: bool,
) -> Encoding:
    """The tokenizer's output alone, for views that need no model run (tokens, shapes, marks).

    Raises InputError (not cached) for text it cannot tokenise, exactly as get_analysis does.
    The same LRU as the analyses: Encoding is never mutated by a page.
    """
    return encode(get_model(model_name), text_a, text_b, max_length, truncation,
                  pad_to_max_length)
