"""The Stages page's data: the shared analysis, and one cached function per live check.

Each check is keyed on the same plain values as the analysis (model, texts and the shared
tokenizer options), so it reads the very stages the page draws, [PAD] rows included when padding
is on; the analysis behind it is a cache hit, not a second run of the model. One entry per check,
so a section computes only the checks it shows. Results hold numbers, never translated text.
"""

from __future__ import annotations

import streamlit as st

from components.analysis_view import analysis_of, model_of
from components.cache import ANALYSIS_CACHE_ENTRIES, get_analysis, get_model
from components.inputs import SharedInputs
from core import Analysis, ModelBundle
from core.stages import embedding_checks, lookup_components, pipeline
from core.stages.embedding_checks import BroadcastDemo, LayerNormCheck, OneHotCheck
from core.stages.lookup_components import LookupComparison, SegmentRows
from core.stages.pipeline import AutogradTrace

CheckKey = tuple[str, str, "str | None", "int | None", bool, bool]


def model(inputs: SharedInputs) -> ModelBundle:
    return model_of(inputs)


def analysis(inputs: SharedInputs) -> Analysis:
    """Every stage of the shared input, with the shared tokenizer options."""
    return analysis_of(inputs)


def check_key(inputs: SharedInputs) -> CheckKey:
    """The plain arguments every check below takes, in order."""
    return (inputs.model, inputs.text_a, inputs.text_b, inputs.max_length, inputs.truncation,
            inputs.padding)


def _bundle_and_analysis(
    model_name: str, text_a: str, text_b: str | None, max_length: int | None, truncation: bool,
    padding: bool,
) -> tuple[ModelBundle, Analysis]:
    # The same arguments as analysis_of(inputs) gives get_analysis: a hit on the page's analysis.
    return get_model(model_name), get_analysis(model_name, text_a, text_b, max_length,
                                               truncation, padding)


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner=False)
def autograd_trace(model_name: str, text_a: str, text_b: str | None, max_length: int | None,
                   truncation: bool, padding: bool) -> AutogradTrace:
    return pipeline.autograd_trace(*_bundle_and_analysis(
        model_name, text_a, text_b, max_length, truncation, padding))


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner=False)
def layernorm_check(model_name: str, text_a: str, text_b: str | None, max_length: int | None,
                    truncation: bool, padding: bool) -> LayerNormCheck:
    return embedding_checks.layernorm_check(*_bundle_and_analysis(
        model_name, text_a, text_b, max_length, truncation, padding))


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner=False)
def one_hot_check(model_name: str, text_a: str, text_b: str | None, max_length: int | None,
                  truncation: bool, padding: bool) -> OneHotCheck:
    return embedding_checks.one_hot_check(*_bundle_and_analysis(
        model_name, text_a, text_b, max_length, truncation, padding))


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner=False)
def broadcast_demo(model_name: str, text_a: str, text_b: str | None, max_length: int | None,
                   truncation: bool, padding: bool) -> BroadcastDemo:
    return embedding_checks.broadcast_demo(*_bundle_and_analysis(
        model_name, text_a, text_b, max_length, truncation, padding))


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner=False)
def lookup_comparison(model_name: str, text_a: str, text_b: str | None, max_length: int | None,
                      truncation: bool, padding: bool) -> LookupComparison:
    _bundle, result = _bundle_and_analysis(model_name, text_a, text_b, max_length, truncation,
                                           padding)
    return lookup_components.compare_lookups(result)


@st.cache_data(max_entries=ANALYSIS_CACHE_ENTRIES, show_spinner=False)
def segment_rows(model_name: str, text_a: str, text_b: str | None, max_length: int | None,
                 truncation: bool, padding: bool) -> SegmentRows:
    return lookup_components.segment_rows(*_bundle_and_analysis(
        model_name, text_a, text_b, max_length, truncation, padding))
