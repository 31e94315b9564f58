"""The current input's tokens or analysis for a page, with every notice a user should see.

A page's cache module calls these; on text that cannot be analysed they say why, in the
reader's language, and stop the page (the sidebar stays usable).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from components.cache import get_analysis, get_encoding, get_model
from components.i18n import N_, _
from components.inputs import SharedInputs
from components.labels import markdown_template
from core import Analysis, Encoding, ExplorerError, ModelBundle

T = TypeVar("T")

CHARS_CUT = N_("The text was {count} characters over the explorer's limit; that tail was cut "
               "before tokenising.")
TRUNCATED = N_("Truncated: the input has {full} tokens but the limit is {limit}, so the last "
               "{cut} tokens were cut (BERT cannot read more than its position table holds).")


def model_of(inputs: SharedInputs) -> ModelBundle:
    """The model in use (already loaded by the router)."""
    return get_model(inputs.model)


def encoding_of(inputs: SharedInputs) -> Encoding:
    """The shared inputs tokenised, for a view that needs no model run."""
    enc = or_stop(get_encoding, inputs.model, inputs.text_a, inputs.text_b, inputs.max_length,
                  inputs.truncation, inputs.padding)
    show_notices(enc)
    return enc


def analysis_of(inputs: SharedInputs, attentions: bool = False, notices: bool = True,
                ) -> Analysis:
    """Every stage of the shared inputs, with the same notices (``notices=False`` for a page
    that has shown them already)."""
    result = or_stop(get_analysis, inputs.model, inputs.text_a, inputs.text_b,
                     inputs.max_length, inputs.truncation, inputs.padding, attentions)
    if notices:
        show_notices(result.encoding)
    return result


def or_stop(getter: Callable[..., T], *args: object) -> T:
    """``getter(*args)``; on an input core cannot take, its reason as a warning and the page
    stops there."""
    try:
        return getter(*args)
    except ExplorerError as exc:
        show_error(exc)
        st.stop()


def show_error(exc: ExplorerError) -> None:
    """Core's message, translated from its template, with its values shown verbatim."""
    st.warning(markdown_template(_(exc.template), **exc.params), icon=":material/edit_note:")


def show_notices(enc: Encoding) -> None:
    """Truncation, the character cap and tokenizer warnings, stated with numbers."""
    if enc.chars_cut:
        st.warning(_(CHARS_CUT).format(count=f"{enc.chars_cut:,}"),
                   icon=":material/content_cut:")
    if enc.truncated:
        st.warning(_(TRUNCATED).format(full=f"{enc.full_length:,}", limit=f"{enc.max_length:,}",
                                       cut=f"{enc.truncated:,}"),
                   icon=":material/content_cut:")
    for text in enc.warnings:
        st.info(_(text), icon=":material/info:")

