"""Two models side by side, as the Compare page and the lesson's random-weights step read them.

Model B is named like any model of the picker, or as a model's random-weights copy
(``core.compare.random_name``), built once per model and kept like a loaded model
(``st.cache_resource``). The layer map runs both models over a corpus (the built-in one in a
language, or the sidebar's sentences) as a background job on the process's board, keyed on
(model A, model B, corpus): every page asking for the same map shares one pass, and its result
is a few small matrices.
"""

from __future__ import annotations

import streamlit as st

from components import model_download
from components.cache import get_model
from components.i18n import N_, _
from components.labels import markdown_template
from core import ExplorerError, ModelBundle, ModelLoadError
from core.compare import (
    LayerSimilarity,
    layer_similarity,
    random_name,
    random_weights,
    trained_name,
)
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.models import needs_download
from core.settings import allowed_name, folder_label, pickable_models
from core.similarity.pairs import recipe_of
from core.similarity.recipe import Recipe
from core.vocabulary import is_cjk
from serving import jobs

LANGUAGES_KEPT = 16    # models whose corpus language is kept (a word each)
RANDOM_COPIES = 1
ENGLISH, CHINESE, YOURS = "English", "中文", "A + B"   # the corpus choices, in every language
CORPUS_LANGUAGE = {ENGLISH: "en", CHINESE: "zh"}
RANDOM_LABEL = N_("{model} with random weights")
REFUSED = N_("“{name}” is not one of the models this server offers. Comparing with {fallback} "
             "instead; pick a model from the list.")
MEANWHILE = N_("Comparing with {fallback} meanwhile.")


def random_label(model: str) -> str:
    """A model's random-weights copy as a person reads it, in this run's language."""
    return _(RANDOM_LABEL).format(model=folder_label(model))


def pick_model_b(model_a: str, model_key: str, random_key: str) -> tuple[str, str]:
    """Model B's picker and its random-weights switch, bound to the link under the page's own
    keys; B loaded. Returns B's cache name and its name as shown. A model that is refused,
    fails to load or is still downloading leaves B at A's random weights, with the reason
    said."""
    options = [model_a, *(n for n in pickable_models()
                          if folder_label(n) != folder_label(model_a))]
    asked = st.session_state.get(model_key) or st.query_params.get(model_key)
    if asked and asked not in options:
        options.append(asked)
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    typed = left.selectbox(
        _("Model B"), options, key=model_key, bind="query-params", accept_new_options=True,
        format_func=folder_label,
        help=_("Any model of the sidebar's list, a model folder this server offers, or a model "
               "hub name; a model not on this machine is downloaded first."))
    randomised = right.toggle(
        _("with random weights"), value=True, key=random_key, bind="query-params",
        help=_("The same architecture with the weights it has before any training (as the "
               "transformers library initialises it): what pretraining bought."))
    typed = (typed or "").strip() or model_a
    fallback, fallback_label = random_name(model_a), random_label(model_a)
    name = allowed_name(typed)
    if name is None:
        st.error(markdown_template(_(REFUSED), name=typed, fallback=fallback_label))
        return fallback, fallback_label
    try:
        if needs_download(name):   # in the background, with progress; B stays on the fallback
            model_download.draw_download(name, typed, fallback_label)
            return fallback, fallback_label
        get_model(name)
    except ModelLoadError as exc:
        st.error(markdown_template(_(exc.template), **{**exc.params, "name": typed}) + "\n\n"
                 + markdown_template(_(MEANWHILE), fallback=fallback_label))
        return fallback, fallback_label
    if randomised:
        return random_name(name), random_label(name)
    return name, folder_label(name)


# One random copy at a time: it weighs what its model weighs (bert-base 440 MB) and is not one
# of the loaded models the server budgets for (BERT_EXPLORER_MAX_MODELS), so a second model's
# copy replaces the first rather than adding to the server's memory.
@st.cache_resource(max_entries=RANDOM_COPIES, show_spinner=False)
def get_random_model(model_name: str) -> ModelBundle:
    """The model's architecture with the weights transformers initialises it with (shared and
    never changed, like a loaded model)."""
    return random_weights(get_model(model_name))


def second_model(name: str) -> ModelBundle:
    """Model B by its cache name: a loaded model, or a random-weights copy of one."""
    trained = trained_name(name)
    return get_random_model(trained) if trained is not None else get_model(name)


def recipe_for(name: str) -> Recipe:
    """The sentence recipe of a model, or of the trained model a random copy was made from
    (the same architecture and the same files around it)."""
    return recipe_of(trained_name(name) or name)


@st.cache_resource(max_entries=LANGUAGES_KEPT, show_spinner=False)
def get_default_corpus(model_name: str) -> str:
    """The built-in corpus in the model's language: Chinese when a quarter of its vocabulary is
    Chinese characters (bert-base-chinese), else English."""
    vocab = get_model(model_name).tokenizer.get_vocab()
    chinese = sum(len(t) == 1 and is_cjk(t) for t in vocab)
    return CHINESE if chinese > 0.25 * len(vocab) else ENGLISH


def corpus_texts(corpus: str, extra: tuple[str, ...]) -> list[str]:
    """The built-in corpus's sentences in ``corpus``'s language, then ``extra``; only
    ``extra`` for the sidebar's sentences."""
    language = CORPUS_LANGUAGE.get(corpus)
    built_in = [r.sentence for r in NEIGHBOUR_CORPUS if r.language == language]
    return built_in + list(extra)


def map_job(model_a: str, model_b: str, corpus: str, extra: tuple[str, ...]
            ) -> jobs.Job[LayerSimilarity | ExplorerError]:
    """The job running both models over the corpus, shared through the job board by its key
    (a failed one is started again there); its result is the layer map with its checks, or the
    refusal of the input (rows that cannot be matched, no sentences): an answer kept like a
    map, so a look at a refused corpus does not run both models again."""
    texts = corpus_texts(corpus, extra)

    def work(job: jobs.Job) -> LayerSimilarity | ExplorerError:
        bundle_a = get_model(model_a)
        bundle_b = bundle_a if model_b == model_a else second_model(model_b)
        try:
            return layer_similarity(bundle_a, bundle_b, texts, progress=job.report,
                                    with_checks=True)
        except ExplorerError as refusal:
            return refusal

    return jobs.submit(("compare: layer map", model_a, model_b, corpus, extra), work,
                       name=f"layer map of {model_a} and {model_b}")
