"""The one caching layer between pages and core.

Models, per-model tables and the analysis of each input live in ``st.cache_resource`` (one copy
shared by all sessions, never mutated; the analysis' arrays are locked read-only); smaller
per-input results live in ``st.cache_data``. Keys are plain strings, ints and bools, and every
cache is bounded so memory levels off however many sentences a class types.
"""

from __future__ import annotations

import gc

import streamlit as st

from core import Analysis, ModelBundle, analyze, load_model

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


# cache_resource, not cache_data: a hit hands back the one shared result instead of unpickling a
# copy (9 MB for 512 tokens, on every rerun of every page). Its arrays are read-only, so no page
# can change what another session sees.
@st.cache_resource(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner="Running the model…")
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
    return analyze(
        get_model(model_name),
        text_a,
        text_b,
        max_length=max_length,
        truncation=truncation,
        pad_to_max_length=pad_to_max_length,
        attentions=attentions,
    ).read_only()
