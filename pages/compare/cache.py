"""Caching for the Compare page.

Model B, its recipe and the layer map's job are components.two_models' (the lesson's random-weights
step reads the same map); the built-in corpus's pass is components.builtin_corpus'. One pair on
both models is a per-input result keyed on the InputKey first; a list of pairs on both is a job
on the board.
"""

from __future__ import annotations

import numpy as np

from components.cache import get_model, results_cache
from components.input_key import InputKey
from components.two_models import recipe_for, second_model
from core import ModelBundle
from core.compare import compare_on_pairs, disagreements
from core.contexts.neighbours import Neighbour, Query, nearest_to_query, query_of
from core.contexts.vectors import ContextVectors
from core.similarity.pair_lists import PairList, read_text
from core.similarity.pairs import compare_pairs, layer_columns, pair_contributions
from core.similarity.recipe import Recipe
from core.tokens import Encoding, clean_texts, encode
from pages.compare.records import PairOnBoth, PairsOnBoth
from serving import jobs

SHARE = 0.01           # of the results budget: one pair's curves and token-pair splits


def _pair_on(bundle: ModelBundle, name: str, text_a: str, text_b: str
             ) -> tuple[np.ndarray, Recipe]:
    recipe = recipe_for(name)
    frame = compare_pairs(bundle, [(text_a, text_b)], recipe=recipe)
    curve = frame[layer_columns(int(bundle.config.num_hidden_layers))].iloc[0]
    return curve.to_numpy(dtype=np.float64), recipe


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
        pair_contributions(bundle_a, key.text_a, text_b, recipe=recipe_a) if both_mean else None,
        pair_contributions(bundle_b, key.text_a, text_b, recipe=recipe_b) if both_mean else None)


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

@results_cache("compare: sentence A on both", SHARE)
def get_queries(key: InputKey, model_b: str) -> tuple[Query, Query, Encoding, Encoding]:
    """Sentence A alone through both models (every layer), and its two encodings (for the
    characters of each token)."""
    bundle_a, bundle_b = get_model(key.model), second_model(model_b)
    return (query_of(bundle_a, key.text_a), query_of(bundle_b, key.text_a),
            encode(bundle_a, key.text_a), encode(bundle_b, key.text_a))


def neighbours(name: str, corpus: ContextVectors, query: Query, position: int, layer: int,
               k: int = 10) -> list[Neighbour]:
    """``core.contexts.nearest_to_query``: the corpus tokens nearest to token ``position`` of
    the query at ``layer``, the position and layer checked (a query over the stored vectors
    takes milliseconds: not cached)."""
    return nearest_to_query(second_model(name), corpus, query, position, layer, k)
