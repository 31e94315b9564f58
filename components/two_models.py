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

from components.cache import get_model
from core import ExplorerError, ModelBundle
from core.compare import LayerSimilarity, layer_similarity, random_weights, trained_name
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.similarity.pairs import recipe_of
from core.similarity.recipe import Recipe
from serving import jobs

LANGUAGES_KEPT = 16    # models whose corpus language is kept (a word each)
RANDOM_COPIES = 1
ENGLISH, CHINESE, YOURS = "English", "中文", "A + B"   # the corpus choices, in every language
CORPUS_LANGUAGE = {ENGLISH: "en", CHINESE: "zh"}


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
    chinese = sum(len(t) == 1 and "\u4e00" <= t <= "\u9fff" for t in vocab)
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
