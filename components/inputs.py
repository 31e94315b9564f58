"""The shared inputs drawn by the router on every page: model picker, sentence A, sentence B.

Each is one keyed widget bound to the URL (``?a=...&b=...&model=...``), so every view is a
shareable link and the inputs survive a page change.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

import streamlit as st

from components.cache import get_model
from components.labels import markdown_code, markdown_template
from core import DEFAULT_MODEL, ModelLoadError
from core.settings import allowed_name, pickable_models

DEFAULT_SENTENCE = "This is a test sentence"
TEXT_DEFAULTS = {"a": DEFAULT_SENTENCE, "b": ""}
ACTIVE_MODEL_KEY = "active_model"   # last model that loaded: the app stays on it after a failure
# Characters of a sentence, URL-encoded, a link may carry: servers refuse request lines of tens of
# kilobytes, so two such sentences still make a link any server and browser take.
URL_TEXT_LIMIT = 6000
REFUSED = ("“{name}” is not one of the models this server offers. Staying on {fallback}; pick a "
           "model from the list.")
STAYING = "Staying on {fallback}."


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
    seed_texts_from_url()
    with st.sidebar:
        st.header("Input")
        st.selectbox(
            "Model",
            options,
            key="model",
            bind="query-params",
            accept_new_options=True,
            help="The embedded all-MiniLM-L6-v2 works offline. Other names need the model hub, "
            "the Hugging Face cache, or a model folder this server is set up to offer.",
        )
        st.text_area("Sentence A", key="a", height=90)
        st.text_area(
            "Sentence B (optional)",
            key="b",
            height=90,
            help="Give a second sentence to see a pair: [CLS] A [SEP] B [SEP], segments 0 and 1.",
        )
        texts_to_url()
    _load_requested_model()  # outside the sidebar: a load error shows at the top of the page
    st.sidebar.caption(f"Model in use: {markdown_code(st.session_state[ACTIVE_MODEL_KEY])}")


def seed_texts_from_url() -> None:
    """Fill the sentence boxes from the link on a session's first run.

    The boxes are not bound to the URL by Streamlit: a bound text goes into the link however long
    it is, and a 20,000-character sentence makes a link the server refuses, so reloading the page
    showed a browser error. ``texts_to_url`` writes the link instead, leaving out what is too long.
    """
    for key, default in TEXT_DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = st.query_params.get(key, default)


def texts_to_url() -> None:
    """Put both sentences in the link (as a bound widget would), unless they are too long for it."""
    too_long = False
    for key, default in TEXT_DEFAULTS.items():
        text = st.session_state.get(key) or ""
        fits = len(urllib.parse.quote(text)) <= URL_TEXT_LIMIT
        too_long |= not fits
        if text == default or not fits:
            st.query_params.pop(key, None)
        elif st.query_params.get(key) != text:
            st.query_params[key] = text
    if too_long:
        st.caption("This text is too long for a link, so the page's address leaves it out: a "
                   "link copied now opens without it.")


def _load_requested_model() -> None:
    """Load the picked model; on failure say why and stay on the model that worked before."""
    typed = (st.session_state.get("model") or "").strip() or DEFAULT_MODEL
    fallback = st.session_state.get(ACTIVE_MODEL_KEY, DEFAULT_MODEL)
    name = allowed_name(typed)
    if name is None:
        # The same words for every refused name, existing folder or not: nothing about the disk.
        st.error(markdown_template(REFUSED, name=typed, fallback=fallback))
        return _stay_on(fallback)
    try:
        get_model(name)
        st.session_state[ACTIVE_MODEL_KEY] = name
    except ModelLoadError as exc:
        # Core's words, by its template; the name is the one typed, never the resolved path.
        message = markdown_template(exc.template, **{**exc.params, "name": typed})
        st.error(message + "\n\n" + markdown_template(STAYING, fallback=fallback))
        _stay_on(fallback)


def _stay_on(fallback: str) -> None:
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
