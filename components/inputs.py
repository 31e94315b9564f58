"""The shared inputs drawn by the router on every page: language, model, sentences A and B, and
the tokenizer's options.

They live in the URL (``?lang=zh&model=...&a=...&b=...&max_length=128&padding=true``), so every
view is a shareable link and the inputs survive a page change. Pages read them once, through
``shared_inputs()``.
"""

from __future__ import annotations

import urllib.parse

import streamlit as st

from components import model_download, model_picker
from components.cache import get_model, loading_default, model_limit
from components.controls import whole_number
from components.i18n import DEFAULT_LANGUAGE, LANGUAGES, N_, _, set_language
from components.input_key import InputKey
from components.labels import markdown_code, markdown_template
from core import DEFAULT_MODEL, ModelLoadError
from core.models import needs_download
from core.settings import DEFAULT_SENTENCE, allowed_name, folder_label, pickable_models

TEXT_DEFAULTS = {"a": DEFAULT_SENTENCE, "b": ""}
ACTIVE_MODEL_KEY = "active_model"   # last model that loaded: the app stays on it after a failure
# Characters of a sentence, URL-encoded, a link may carry: servers refuse request lines of tens of
# kilobytes, so two such sentences still make a link any server and browser take.
URL_TEXT_LIMIT = 6000
REFUSED = N_("“{name}” is not one of the models this server offers. Staying on {fallback}; "
             "pick a model from the list.")
STAYING = N_("Staying on {fallback}.")


def draw_language_switch() -> None:
    """English / 简体中文 at the top of the sidebar, carried in the link as ``?lang=zh``.

    Not a bound widget: a bound choice puts its shown label in the link (``?lang=简体中文``),
    and the link's word is the language code. Like the sentences, the router writes it back to
    the link on every run, so it survives a page change.
    """
    if "lang" not in st.session_state:
        asked = st.query_params.get("lang", DEFAULT_LANGUAGE)
        st.session_state["lang"] = asked if asked in LANGUAGES else DEFAULT_LANGUAGE
    st.sidebar.segmented_control(
        "Language · 语言", list(LANGUAGES), format_func=LANGUAGES.__getitem__, key="lang",
        required=True, on_change=_relabel_choices,
    )
    code = set_language(st.session_state.get("lang"))
    _carry("lang", code, DEFAULT_LANGUAGE)


def _relabel_choices() -> None:
    """On a language switch, every choice the reader made is given again, unchanged.

    A keyed widget keeps its identity when its labels change, and the browser kept showing the
    chosen option in the old language ("第 1 层" on an English page) though the page ran with the
    right one. A value given through the session is sent to the browser with the run, drawn with
    this language's labels. On/off values are left alone: no choice of theirs has a translated
    label, and a button's key refuses a value."""
    for key, value in list(st.session_state.items()):
        if key != "lang" and isinstance(value, int | float | str | list | tuple) \
                and not isinstance(value, bool):
            st.session_state[key] = value


def draw_shared_inputs() -> None:
    """Draw the model picker, sentence boxes and tokenizer options; load the model asked for."""
    options = pickable_models()
    # A name typed in, or given in the URL, joins the list so the picker shows what was asked for.
    asked = st.session_state.get("model") or st.query_params.get("model")
    if asked and asked not in options:
        options.append(asked)
    # A session's first run starts the boxes at the link's sentences, as the widgets' `value`:
    # the browser's own value wins over that. After a server restart or a replica failover the
    # reconnected tab is a new session whose first run carries what was just typed; a value
    # written into session state here won over it, and that first edit snapped back.
    first = {key: None if key in st.session_state else st.query_params.get(key, default)
             for key, default in TEXT_DEFAULTS.items()}
    with st.sidebar:
        st.header(_("Input"))
        st.selectbox(
            _("Model"), options, key="model", bind="query-params", accept_new_options=True,
            help=_("The embedded all-MiniLM-L6-v2 works offline. Other names need the model "
                   "hub, the Hugging Face cache, or a model folder this server is set up to "
                   "offer."),
        )
        st.text_area(_("Sentence A"), value=first["a"], key="a", height=90)
        st.text_area(
            _("Sentence B (optional)"), value=first["b"], key="b", height=90,
            help=_("Give a second sentence to see a pair: [CLS] A [SEP] B [SEP], segments 0 "
                   "and 1."),
        )
        _draw_examples()
        _texts_to_url()
    _load_requested_model()  # outside the sidebar: a load error shows at the top of the page
    with st.sidebar:
        st.caption(_("Model in use: {name}").format(
            name=markdown_code(folder_label(st.session_state[ACTIVE_MODEL_KEY]))))
        model_picker.draw_model_facts(options)
        _draw_tokenizer_options()


# One click to the tutorials' inputs: the sentence pair, and Chinese text (which the embedded
# English vocabulary mostly turns into [UNK], explained where it happens).
EXAMPLES = (
    (N_("The tutorial's pair"), "What is your name?", "My name is BERT."),
    ("我爱你", "我爱你", ""),
    (N_("A Chinese pair"), "今天天气真好。", "我们去公园散步吧。"),
)


def _use_example(a: str, b: str) -> None:
    st.session_state["a"], st.session_state["b"] = a, b


def _draw_examples() -> None:
    row = st.container(horizontal=True)
    for number, (label, a, b) in enumerate(EXAMPLES):
        row.button(_(label), key=f"example_{number}", on_click=_use_example, args=(a, b),
                   help=_("Type this into the sentence boxes."))


def _draw_tokenizer_options() -> None:
    """Max length, truncation and padding: one setting for every page, so [PAD] rows chosen
    here show as embeddings on Stages too."""
    limit = model_limit(st.session_state[ACTIVE_MODEL_KEY])
    with st.expander(_("Tokenizer options"), icon=":material/tune:"):
        whole_number(st, _("Max length"), min_value=4, max_value=limit, value=limit,
                     key="max_length",
                     help=_("At most {limit}: the size of the position table.").format(
                         limit=limit))
        st.toggle(_("Truncate to max length"), value=True, key="truncation",
                  bind="query-params")
        st.toggle(_("Pad to max length"), value=False, key="padding", bind="query-params",
                  help=_('As in the tutorials: padding="max_length", max_length=128.'))


def _texts_to_url() -> None:
    """Put both sentences in the link, unless they are too long for one.

    The boxes are not bound to the URL by Streamlit: a bound text goes into the link however long
    it is, and a 20,000-character sentence makes a link the server refuses, so reloading the page
    showed a browser error.
    """
    too_long = False
    for key, default in TEXT_DEFAULTS.items():
        text = st.session_state.get(key) or ""
        fits = len(urllib.parse.quote(text)) <= URL_TEXT_LIMIT
        too_long |= not fits
        _carry(key, text if fits else default, default)
    if too_long:
        st.caption(_("This text is too long for a link, so the page's address leaves it out: a "
                     "link copied now opens without it."))


def _carry(key: str, value: str, default: str) -> None:
    """Write ``value`` into the link (dropped when it is the default), as a bound widget would;
    run on every page, so a page change (which drops unbound parameters) keeps it."""
    if value == default:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != value:
        st.query_params[key] = value


def _load_requested_model() -> None:
    """Load the picked model; on failure say why and stay on the model that worked before."""
    typed = (st.session_state.get("model") or "").strip() or DEFAULT_MODEL
    fallback = st.session_state.get(ACTIVE_MODEL_KEY, DEFAULT_MODEL)
    name = allowed_name(typed)
    if name is None:
        # The same words for every refused name, existing folder or not: nothing about the disk.
        st.error(markdown_template(_(REFUSED), name=typed, fallback=folder_label(fallback)))
        return _stay_on(fallback)
    try:
        if needs_download(name):   # in the background, with progress; the page stays on fallback
            model_download.draw_download(name, typed, folder_label(fallback))
            return _stay_on(fallback)
        # While the server's warm-up loads the default model, a page draws what the tokenizer's
        # files give and waits for the model only where it needs it (components.cache).
        if not loading_default(name):
            get_model(name)
        st.session_state[ACTIVE_MODEL_KEY] = name
    except ModelLoadError as exc:
        # Core's words, by its template; the name is the one typed, never the resolved path.
        message = markdown_template(_(exc.template), **{**exc.params, "name": typed})
        st.error(message + "\n\n" + markdown_template(_(STAYING),
                                                       fallback=folder_label(fallback)))
        _stay_on(fallback)


def _stay_on(fallback: str) -> None:
    get_model(fallback)
    st.session_state[ACTIVE_MODEL_KEY] = fallback


def shared_inputs() -> InputKey:
    """What the user typed, the model in use and the tokenizer's options: the key every page's
    per-input cached functions take first."""
    text_b = st.session_state.get("b") or ""
    model = st.session_state.get(ACTIVE_MODEL_KEY, DEFAULT_MODEL)
    limit = model_limit(model)
    max_length = int(st.session_state.get("max_length") or limit)
    return InputKey(
        model=model,
        text_a=st.session_state.get("a") or "",
        text_b=text_b if text_b.strip() else None,
        # The model's own limit is None: one cache key, so pages share one result.
        max_length=None if max_length >= limit else max_length,
        truncation=bool(st.session_state.get("truncation", True)),
        padding=bool(st.session_state.get("padding", False)),
    )
