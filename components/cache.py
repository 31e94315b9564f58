"""The one caching layer between pages and core.

Models and per-model tables live in ``st.cache_resource`` (one copy shared by all sessions, never
mutated); per-input results live in ``st.cache_data``, keyed on plain strings, ints and bools.
Both are bounded so memory levels off however many sentences a class types.
"""

from __future__ import annotations

import streamlit as st

from core import Analysis, ModelBundle, analyze, load_model

MODEL_CACHE_ENTRIES = 2       # the default model plus one other, at most ~1.5 GB for bert-large
ANALYSIS_CACHE_ENTRIES = 24   # a 512-token result is ~10 MB of float32; 24 keep it under 250 MB


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner="Loading the model…")
def get_model(name: str) -> ModelBundle:
    """The loaded model, shared by every session. Raises ModelLoadError (not cached)."""
    return load_model(name)


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner="Running the model…")
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
    )
