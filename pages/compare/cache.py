"""Caching for the Compare page.

Model B is a model of the picker (``components.cache.get_model``) or a model's random-weights
copy, built once per model and kept like a loaded model (``st.cache_resource``). The layer map
runs both models over a corpus: a background job (serving.jobs, with progress), shared through
the job board by (model A, model B, corpus) (its result is a few small matrices). One
pair on both models is a per-input result keyed on the InputKey first.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from components.cache import get_model, results_cache
from components.input_key import InputKey
from core import ExplorerError, ModelBundle, analyze
from core.compare import (
    LayerSimilarity,
    compare_on_pairs,
    disagreements,
    layer_similarity,
    random_weights,
    trained_name,
)
from core.contexts import corpus_pass, nearest_to
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.contexts.neighbours import Neighbour, Query, query_of, with_tokens
from core.contexts.vectors import ContextVectors
from core.similarity.pair_lists import PairList, read_text
from core.similarity.pairs import (
    PairContributions,
    compare_pairs,
    contributions_of,
    layer_columns,
    recipe_of,
    sentence_limit,
)
from core.similarity.recipe import Recipe
from core.tokens import Encoding, clean_texts, encode
from pages.compare.records import PairOnBoth, PairsOnBoth
from pages.contexts.cache import builtin_job
from serving import jobs

SHARE = 0.01           # of the results budget: one pair's curves and token-pair splits
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


def _pair_on(bundle: ModelBundle, name: str, text_a: str, text_b: str
             ) -> tuple[np.ndarray, Recipe]:
    recipe = recipe_for(name)
    frame = compare_pairs(bundle, [(text_a, text_b)], recipe=recipe)
    curve = frame[layer_columns(int(bundle.config.num_hidden_layers))].iloc[0]
    return curve.to_numpy(dtype=np.float64), recipe


def _split(bundle: ModelBundle, recipe: Recipe, text_a: str, text_b: str
           ) -> PairContributions:
    limit = sentence_limit(bundle, recipe)
    alone_a = analyze(bundle, text_a, max_length=limit, attentions=False)
    alone_b = analyze(bundle, text_b, max_length=limit, attentions=False)
    return contributions_of(alone_a, alone_b, None, own=recipe.own,
                            unk_id=bundle.tokenizer.unk_token_id, recipe=recipe)


@results_cache("compare: one pair", SHARE)
def get_pair(key: InputKey, model_b: str) -> PairOnBoth:
    """Sentence A against sentence B on model A and on model B: each model's cosine by its own
    recipe at every layer, and the token-pair split at each last layer when both recipes are
    the plain mean. InputError (not cached) for an empty sentence."""
    text_b = key.text_b or ""
    bundle_a, bundle_b = get_model(key.model), second_model(model_b)
    clean_texts(key.text_a, None)   # InputError for an empty sentence, before any run
    clean_texts(text_b, None)
    curve_a, recipe_a = _pair_on(bundle_a, key.model, key.text_a, text_b)
    curve_b, recipe_b = _pair_on(bundle_b, model_b, key.text_a, text_b)
    both_mean = recipe_a.mean_only and recipe_b.mean_only
    return PairOnBoth(
        curve_a, curve_b, recipe_a, recipe_b,
        _split(bundle_a, recipe_a, key.text_a, text_b) if both_mean else None,
        _split(bundle_b, recipe_b, key.text_a, text_b) if both_mean else None)


# --- many pairs ---------------------------------------------------------------------------------

@results_cache("compare: pair lists", 0.02, heavy=False)
def get_pair_list(model_name: str, text: str) -> PairList:
    """The pairs in the box, read as the Pairs page reads a list (core.sentence_files.reader):
    the same for every model; keyed on model A first, as every per-input result here is."""
    return read_text(text)


def pairs_job(model_a: str, model_b: str, pairs: PairList) -> jobs.Job[PairsOnBoth]:
    """The shared job scoring ``pairs`` on both models, each by its own recipe, then comparing
    them with people's scores (the one running or finished, or a new one)."""
    bundle_a, bundle_b = get_model(model_a), second_model(model_b)   # loaded in the page's run

    def work(job: jobs.Job[PairsOnBoth]) -> PairsOnBoth:
        total = 2 * len(pairs.pairs)
        cos_a = compare_pairs(bundle_a, pairs.pairs, recipe=recipe_for(model_a),
                              progress=lambda d, t: job.report(d * len(pairs.pairs) // max(t, 1),
                                                               total))["cosine"].to_numpy()
        cos_b = compare_pairs(bundle_b, pairs.pairs, recipe=recipe_for(model_b),
                              progress=lambda d, t: job.report(
                                  len(pairs.pairs) + d * len(pairs.pairs) // max(t, 1),
                                  total))["cosine"].to_numpy()
        return PairsOnBoth(cos_a, cos_b, compare_on_pairs(cos_a, cos_b, pairs.scores),
                           disagreements(cos_a, cos_b))

    return jobs.submit(("compare: pairs", model_a, model_b, pairs.key()), work,
                       name=f"pairs {len(pairs.pairs)} on {model_a} and {model_b}")


# --- neighbours ---------------------------------------------------------------------------------

def corpus_job(name: str) -> jobs.Job[ContextVectors]:
    """The built-in corpus through model ``name``: a trained model's pass is the Contexts
    page's own (shared with it), a random copy's is its own job on the board."""
    trained = trained_name(name)
    if trained is None:
        return builtin_job(name)
    return jobs.submit(("compare: built-in corpus, random weights", trained),
                       lambda job: corpus_pass(get_random_model(trained), progress=job.report),
                       name=f"built-in corpus on {trained} with random weights")


@results_cache("compare: sentence A on both", SHARE)
def get_queries(key: InputKey, model_b: str) -> tuple[Query, Query, Encoding, Encoding]:
    """Sentence A alone through both models (every layer), and its two encodings (for the
    characters of each token)."""
    bundle_a, bundle_b = get_model(key.model), second_model(model_b)
    return (query_of(bundle_a, key.text_a), query_of(bundle_b, key.text_a),
            encode(bundle_a, key.text_a), encode(bundle_b, key.text_a))


def neighbours(name: str, corpus: ContextVectors, query: Query, position: int, layer: int,
               k: int = 10) -> list[Neighbour]:
    """The corpus tokens nearest to token ``position`` of the query at ``layer`` (a query over
    the stored vectors takes milliseconds: not cached)."""
    return with_tokens(second_model(name), corpus,
                       nearest_to(corpus, query.states[layer, position], layer, k))
