"""Getting the current input's analysis (or only its tokens) on a page, with every notice a user
should see."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from components.cache import get_analysis, get_encoding, get_model
from components.inputs import SharedInputs, shared_inputs
from core import Analysis, Encoding, InputError, ModelBundle

T = TypeVar("T")


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
    result = _of_shared_inputs(get_analysis, max_length=max_length, truncation=truncation,
                               pad_to_max_length=pad_to_max_length, attentions=attentions)
    show_notices(result.encoding)
    return result


def current_encoding(
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
) -> Encoding:
    """The shared inputs tokenised, for a view that needs no model run; the same messages."""
    enc = _of_shared_inputs(get_encoding, max_length=max_length, truncation=truncation,
                            pad_to_max_length=pad_to_max_length)
    show_notices(enc)
    return enc


def _of_shared_inputs(getter: Callable[..., T], max_length: int | None, **options: bool) -> T:
    """``getter(model, a, b, ...)`` for the shared inputs; on text it cannot take, the reason as
    a warning and the page stops."""
    inputs: SharedInputs = shared_inputs()
    if max_length is not None and max_length >= current_model().config.max_position_embeddings:
        max_length = None  # the model's own limit: one cache key, so pages share one result
    try:
        return getter(inputs.model, inputs.text_a, inputs.text_b, max_length=max_length,
                      **options)
    except InputError as exc:
        st.warning(str(exc), icon=":material/edit_note:")
        st.stop()


def show_notices(enc: Encoding) -> None:
    """Truncation, the character cap and tokenizer warnings, stated with numbers."""
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
