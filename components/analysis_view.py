"""The current input's tokens or analysis for a page, with every notice a user should see.

A page's cache module calls these; on text that cannot be analysed they say why, in the
reader's language, and stop the page (the sidebar stays usable).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import streamlit as st

from components.cache import get_analysis, get_encoding, get_model
from components.i18n import N_plural, _, counted
from components.input_key import InputKey
from components.labels import markdown_template
from core import Encoding, ExplorerError, ModelBundle

if TYPE_CHECKING:   # core.analysis imports torch: not for a page that shows tokens alone
    from core import Analysis

CHARS_CUT = N_plural(
    "The text was {count} character over the explorer's limit; that tail was cut before "
    "tokenising.",
    "The text was {count} characters over the explorer's limit; that tail was cut before "
    "tokenising.")
TRUNCATED = N_plural(
    "Truncated: the input has {full} tokens but the limit is {limit}, so the last {cut} token "
    "was cut (BERT cannot read more than its position table holds).",
    "Truncated: the input has {full} tokens but the limit is {limit}, so the last {cut} tokens "
    "were cut (BERT cannot read more than its position table holds).")


def model_of(key: InputKey) -> ModelBundle:
    """The model in use (already loaded by the router)."""
    return get_model(key.model)


def encoding_of(key: InputKey) -> Encoding:
    """The shared inputs tokenised, for a view that needs no model run."""
    with stop_on_input_error():
        enc = get_encoding(key)
    show_notices(enc)
    return enc


def encoding_or_none(key: InputKey) -> Encoding | None:
    """The shared inputs tokenised, with their notices; for text core refuses, its reason and
    None, and the page goes on (for a page whose views do not all need the sentences)."""
    try:
        enc = get_encoding(key)
    except ExplorerError as exc:
        show_error(exc)
        return None
    show_notices(enc)
    return enc


def analysis_of(key: InputKey, attentions: bool = False, notices: bool = True) -> Analysis:
    """Every stage of the shared inputs, with the same notices (``notices=False`` for a page
    that has shown them already)."""
    with stop_on_input_error():
        result = get_analysis(key, attentions)
    if notices:
        show_notices(result.encoding)
    return result


@contextmanager
def stop_on_input_error() -> Iterator[None]:
    """Around direct calls into the caches or core: on an input core cannot take, its reason as
    a warning, and the page stops there (the sidebar stays usable)."""
    try:
        yield
    except ExplorerError as exc:
        show_error(exc)
        st.stop()


def show_error(exc: ExplorerError) -> None:
    """Core's message, translated from its template, with its values shown verbatim."""
    st.warning(markdown_template(_(exc.template), **exc.params), icon=":material/edit_note:")


def show_notices(enc: Encoding) -> None:
    """Truncation, the character cap and tokenizer warnings, stated with numbers."""
    if enc.chars_cut:
        st.warning(counted(CHARS_CUT, enc.chars_cut).format(count=f"{enc.chars_cut:,}"),
                   icon=":material/content_cut:")
    if enc.truncated:
        st.warning(counted(TRUNCATED, enc.truncated).format(
            full=f"{enc.full_length:,}", limit=f"{enc.max_length:,}", cut=f"{enc.truncated:,}"),
                   icon=":material/content_cut:")
    for text in enc.warnings:
        st.info(_(text), icon=":material/info:")

