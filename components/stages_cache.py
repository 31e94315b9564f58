"""Cached live checks of the Stages page, keyed on the same strings as the analysis and bounded
like it; one entry per check, so a section computes only the checks it shows."""

from __future__ import annotations

import streamlit as st

from components.cache import ANALYSIS_CACHE_ENTRIES, get_analysis, get_model
from core.stages import STAGE_CHECKS


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES * len(STAGE_CHECKS),
               show_spinner="Checking the stages…")
def get_stage_check(check: str, model_name: str, text_a: str, text_b: str | None) -> object:
    """One of ``core.stages.STAGE_CHECKS`` ("trace", "layernorm", ...) for one input.

    The analysis is the page's own (the same defaults as ``current_analysis()``), so it is a
    cache hit rather than a second run of the model.
    """
    return STAGE_CHECKS[check](get_model(model_name), get_analysis(model_name, text_a, text_b))
