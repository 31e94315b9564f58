"""The shared inputs drawn by the router on every page: model picker, sentence A, sentence B.

Each is one keyed widget bound to the URL (``?a=...&b=...&model=...``), so every view is a
shareable link and the inputs survive a page change.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.cache import get_model
from components.labels import markdown_code, markdown_message
from core import DEFAULT_MODEL, ModelLoadError
from core.settings import is_allowed, pickable_models

DEFAULT_SENTENCE = "This is a test sentence"
ACTIVE_MODEL_KEY = "active_model"   # last model that loaded: the app stays on it after a failure


@dataclass(frozen=True)
class SharedInputs:
    model: str          # the model actually in use (may differ from the one asked for)
    text_a: str
    text_b: str | None

    @property
    def is_pair(self) -> bool:
        return self.text_b is not None


def draw_shared_inputs() -> None:
    """Draw the model picker and sentence boxes in the sidebar and load the model asked for."""
    options = pickable_models()
    # A name typed in, or given in the URL, joins the list so the picker shows what was asked for.
    asked = st.session_state.get("model") or st.query_params.get("model")
    if asked and asked not in options:
        options.append(asked)
    with st.sidebar:
        st.header("Input")
        st.selectbox(
            "Model",
            options,
            key="model",
            bind="query-params",
            accept_new_options=True,
            help="The embedded all-MiniLM-L6-v2 works offline. Other names need the model hub "
            "or a folder path on this machine.",
        )
        st.text_area("Sentence A", value=DEFAULT_SENTENCE, key="a", bind="query-params", height=90)
        st.text_area(
            "Sentence B (optional)",
            value="",
            key="b",
            bind="query-params",
            height=90,
            help="Give a second sentence to see a pair: [CLS] A [SEP] B [SEP], segments 0 and 1.",
        )
    _load_requested_model()  # outside the sidebar: a load error shows at the top of the page
    st.sidebar.caption(f"Model in use: {markdown_code(st.session_state[ACTIVE_MODEL_KEY])}")


def _load_requested_model() -> None:
    """Load the picked model; on failure say why and stay on the model that worked before."""
    requested = (st.session_state.get("model") or "").strip() or DEFAULT_MODEL
    fallback = st.session_state.get(ACTIVE_MODEL_KEY, DEFAULT_MODEL)
    if not is_allowed(requested):
        # The name comes from the URL: escaped, so a shared link cannot add images or links.
        st.error(
            f"{markdown_code(requested)} is not one of the models this server offers, nor a "
            f"model folder on this machine. Staying on {markdown_code(fallback)}; pick a model "
            "from the list."
        )
        requested = fallback
    try:
        get_model(requested)
        st.session_state[ACTIVE_MODEL_KEY] = requested
    except ModelLoadError as exc:
        message = markdown_message(str(exc), requested)  # core's words, quoting the name
        st.error(f"{message}\n\nStaying on {markdown_code(fallback)}.")
        get_model(fallback)
        st.session_state[ACTIVE_MODEL_KEY] = fallback


def shared_inputs() -> SharedInputs:
    """What the user typed and the model in use, as pages read them."""
    text_b = st.session_state.get("b") or ""
    return SharedInputs(
        model=st.session_state.get(ACTIVE_MODEL_KEY, DEFAULT_MODEL),
        text_a=st.session_state.get("a") or "",
        text_b=text_b if text_b.strip() else None,
    )
