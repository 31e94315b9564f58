"""Caching for the Similarity page, on top of components.cache.

The corpus statistics (anisotropy baselines, per-dimension mean and std) depend only on the
model, so they are computed once per model name (components.builtin_corpus.get_corpus_stats,
which the Contexts page reads too) and shared by every session (never mutated). Everything
that depends on what the user typed is a ``results_cache`` keyed on the InputKey first, then
plain strings, ints and bools, and bounded by the bytes it holds. Results hold numbers only,
never translated text, and are never mutated.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from components.builtin_corpus import get_corpus_stats
from components.cache import MODEL_CACHE_ENTRIES, get_analysis, results_cache
from components.input_key import InputKey
from core import Analysis
from core.similarity.choices import depth_stages, matching_position, real_positions
from core.similarity.cosines import (
    Dominance,
    TokenRef,
    cls_checks,
    dominance,
    norm_dominance,
    separate_token,
    token_curve,
    token_matrix,
    top_dimensions,
)
from core.similarity.sentences import SentenceComparison, compare_sentences, encoder_max_length

SHARE = 0.02   # of the results budget, for each cache: a curve or one T x T matrix an entry


def warm(model_name: str) -> None:
    """At server start: the corpus statistics every mode of the page compares with."""
    get_corpus_stats(model_name)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def get_encoder_max_length(model_name: str) -> int | None:
    """How many tokens sentence-transformers reads for this model (None: the model's limit)."""
    return encoder_max_length(model_name)


def get_alone(key: InputKey, text: str) -> Analysis:
    """One sentence on its own, cut where sentence-transformers would cut it (the shared padding
    and truncation do not apply: this is the model's own reading of the sentence)."""
    return get_analysis(InputKey(key.model, text, None, get_encoder_max_length(key.model)))


@results_cache("similarity: token matrix", SHARE)
def get_token_matrix(key: InputKey, stage: str, mode: str) -> np.ndarray:
    """(T, T) cosine between the input's real tokens at ``stage`` in ``mode``."""
    return token_matrix(get_analysis(key), stage, mode, get_corpus_stats(key.model))


@results_cache("similarity: dominance", SHARE)
def get_token_dominance(key: InputKey, stage: str) -> tuple[np.ndarray, np.ndarray]:
    """Per real token at ``stage``: its largest dimension and that dimension's share of the
    squared length."""
    pair = get_analysis(key)
    return norm_dominance(pair.stages[stage][real_positions(pair.encoding)])


@results_cache("similarity: sentences", SHARE)
def get_sentence_comparison(key: InputKey) -> SentenceComparison:
    """Sentence A vs B per depth stage; the model's own figure from A and B run separately."""
    text_a, text_b = key.pair()
    return compare_sentences(get_analysis(key), get_alone(key, text_a), get_alone(key, text_b))


@results_cache("similarity: [CLS] checks", SHARE)
def get_cls_checks(key: InputKey) -> tuple[list[Dominance], np.ndarray]:
    """core.similarity.cosines.cls_checks of A and B run separately: per depth stage, the
    dimension that carries most of their [CLS] dot product, and their standardised cosine."""
    text_a, text_b = key.pair()
    return cls_checks(get_alone(key, text_a), get_alone(key, text_b),
                      get_corpus_stats(key.model))


def get_token_refs(key: InputKey, first: int, second: int, separately: bool,
                   ) -> tuple[TokenRef, TokenRef]:
    """Where to read the two chosen tokens (positions in the input): the input itself, or A and B
    each run on its own. Raises InputError when a token does not exist there."""
    pair = get_analysis(key)
    if not separately or key.text_b is None:
        return TokenRef(pair, first), TokenRef(pair, second)
    text_a, text_b = key.pair()
    alone_a, alone_b = get_alone(key, text_a), get_alone(key, text_b)
    return (separate_token(pair, first, alone_a, alone_b),
            separate_token(pair, second, alone_a, alone_b))


@results_cache("similarity: token curve", SHARE)
def get_token_curve(key: InputKey, first: int, second: int, separately: bool,
                    mode: str) -> np.ndarray:
    """(S,) cosine between the two chosen tokens at each depth stage."""
    refs = get_token_refs(key, first, second, separately)
    stages = depth_stages(refs[0].analysis.stages)
    return token_curve(*refs, stages, mode, get_corpus_stats(key.model))


@results_cache("similarity: top dimensions", SHARE)
def get_top_dimensions(key: InputKey, first: int, second: int, separately: bool, stage: str,
                       mode: str, k: int = 10) -> tuple[float, pd.DataFrame, Dominance]:
    """The two tokens' cosine at ``stage`` in ``mode``, the k dimensions that make most of it,
    and the dimension that carries most of their raw dot product."""
    refs = get_token_refs(key, first, second, separately)
    stats = get_corpus_stats(key.model)
    u, v = refs[0].vector(stage), refs[1].vector(stage)
    cosine = float(token_curve(*refs, [stage], mode, stats)[0])
    return cosine, top_dimensions(u, v, stage, mode, stats, k), dominance(u, v)


@results_cache("similarity: control curve", SHARE)
def get_control_curve(key: InputKey, first: int, separately: bool, control: str,
                      mode: str) -> np.ndarray | None:
    """(S,) cosine of the first chosen token with the same token in ``control`` (run on its
    own), at each depth stage; None when ``control`` lacks that token."""
    ref = get_token_refs(key, first, first, separately)[0]
    other = get_alone(key, control)
    position = matching_position(other.encoding, ref.analysis.encoding.input_ids[ref.position])
    if position is None:
        return None
    stages = depth_stages(ref.analysis.stages)
    return token_curve(ref, TokenRef(other, position), stages, mode,
                       get_corpus_stats(key.model))
