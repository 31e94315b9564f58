"""Getting the current input's analysis on a page, with every notice a user should see."""

from __future__ import annotations

import streamlit as st

from components.cache import get_analysis, get_model
from components.inputs import SharedInputs, shared_inputs
from core import Analysis, InputError, ModelBundle


def current_model() -> ModelBundle:
    """The model in use (already loaded by the router)."""
    return get_model(shared_inputs().model)


def current_analysis(
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
    attentions: bool = False,
) -> Analysis:
    """The analysis of the shared inputs; on bad input, a clear message and the page stops."""
    inputs: SharedInputs = shared_inputs()
    if max_length is not None and max_length >= current_model().config.max_position_embeddings:
        # The model's own limit is the default: one cache key, so pages share one analysis.
        max_length = None
    try:
        result = get_analysis(
            inputs.model,
            inputs.text_a,
            inputs.text_b,
            max_length=max_length,
            truncation=truncation,
            pad_to_max_length=pad_to_max_length,
            attentions=attentions,
        )
    except InputError as exc:
        st.warning(str(exc), icon=":material/edit_note:")
        st.stop()
    show_notices(result)
    return result


def show_notices(result: Analysis) -> None:
    """Truncation, the character cap and tokenizer warnings, stated with numbers."""
    enc = result.encoding
    if enc.chars_cut:
        st.warning(
            f"The text was {enc.chars_cut:,} characters over the explorer's limit; "
            "that tail was cut before tokenising.",
            icon=":material/content_cut:",
        )
    if enc.truncated:
        st.warning(
            f"Truncated: the input has {enc.full_length:,} tokens but the limit is "
            f"{enc.max_length:,}, so the last {enc.truncated:,} tokens were cut "
            "(BERT cannot read more than its position table holds).",
            icon=":material/content_cut:",
        )
    for text in enc.warnings:
        st.info(text, icon=":material/info:")
