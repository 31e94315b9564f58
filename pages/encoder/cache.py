"""Encoder's data: one layer's steps per input, the corpus head atlas per model, the pooler.

Per-input results are keyed on the InputKey first (never tensors); results hold numbers only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import streamlit as st

from components.analysis_view import analysis_of
from components.cache import get_analysis, get_model, results_cache
from components.input_key import InputKey
from components.labels import token_labels
from core import Analysis, Encoding
from core.encoder import (
    EncoderSteps,
    HeadAtlas,
    PoolerSteps,
    corpus_head_atlas,
    encoder_steps_from,
    head_atlas,
    pooler_steps,
    stack_layers,
    without_specials,
)
from core.words import Word, attention_by_word, word_masks, words_of_encoding
from pages.encoder import figures as fg
from pages.encoder.records import AttentionMaps, WordAttention


@results_cache("encoder: layer steps", share=0.25)
def get_steps(key: InputKey, layer: int) -> EncoderSteps:
    """Every step of encoder layer ``layer`` for the input, tokenised as every page tokenises it.

    The layer's input and output come from the input's cached analysis, the one every page
    shares: taking a layer apart costs no second forward pass. Raises InputError (not cached).
    """
    return encoder_steps_from(get_model(key.model), get_analysis(key), layer)


@results_cache("encoder: words", share=0.01)
def get_words(key: InputKey) -> tuple[Word, ...]:
    """The input's words (core.words) over the tokens every page shows."""
    return words_of_encoding(analysis_of(key, notices=False).encoding)


@results_cache("encoder: attention by word", share=0.02)
def get_word_attention(key: InputKey, layer: int, hide: bool) -> WordAttention:
    """Layer ``layer``'s attention by word, (heads, W, W): to a word the sum over its pieces,
    from a word the mean; with ``hide``, [CLS], [SEP] and padding dropped and rows renormalised
    as the token view does."""
    attention = get_steps(key, layer).steps["attention_probs"]
    probs, kept = attention_of_words(attention, get_words(key), hide)
    return WordAttention(kept, probs.astype(np.float32))


def attention_of_words(attention: np.ndarray, words: Sequence[Word],
                       hide: bool) -> tuple[np.ndarray, tuple[Word, ...]]:
    """(..., T, T) attention by word (core.words.attention_by_word) and the words kept: with
    ``hide``, [CLS], [SEP] and padding dropped after grouping and rows renormalised."""
    probs = attention_by_word(attention, words)
    if not hide:
        return probs, tuple(words)
    special, real = word_masks(words)
    return (without_specials(probs, special, real),
            tuple(w for w in words if not w.special and w.real))


@results_cache("encoder: every layer's attention", share=0.05)
def get_attention_maps(key: InputKey, hide: bool, by_word: bool) -> AttentionMaps:
    """Every layer's attention of the input, the model's own weights (one run with
    ``output_attentions``, shared with the head atlas), by token or by word (to a word the sum
    over its pieces, from a word the mean), with ``hide`` [CLS], [SEP] and padding dropped and
    rows renormalised (core.encoder.without_specials). Each row keeps its position in the input,
    so "3 name" is the same token on every tab."""
    analysis = analysis_of(key, attentions=True, notices=False)   # shown with the tab
    enc, weights = analysis.encoding, analysis.attention_weights()
    if by_word:
        probs, words = attention_of_words(weights, get_words(key), hide)
        rows = fg.word_rows(words)
    else:
        probs = without_specials(weights, enc.special_tokens_mask, enc.attention_mask) \
            if hide else weights
        rows = fg.token_rows(enc, hide)
    return AttentionMaps(rows.labels, rows.rows, rows.boundary, probs.astype(np.float32))


@results_cache("encoder: attention pictures", share=0.02)
def get_attention_pictures(key: InputKey, hide: bool, by_word: bool,
                           language: str) -> tuple[str, ...]:
    """figures.attention_pictures of get_attention_maps, in ``language`` (the run's, passed as
    the key): a move's report reruns the tab's fragment, which then draws none of them again."""
    return fg.attention_pictures(get_attention_maps(key, hide, by_word), get_model(key.model).label,
                                 by_word)


@results_cache("encoder: layer walk pictures", share=0.02)
def get_walk_pictures(key: InputKey, name: str, language: str) -> tuple[str, ...]:
    """figures.walk_pictures of step ``name`` over every layer, in ``language`` (as
    get_attention_pictures)."""
    bundle = get_model(key.model)
    every = [get_steps(key, layer) for layer in range(1, bundle.config.num_hidden_layers + 1)]
    return fg.walk_pictures(every, name, token_labels(every[0].encoding.tokens), bundle.label)


@st.cache_resource(max_entries=4, show_spinner=False)
def get_corpus_atlas(model_name: str, by_word: bool = False) -> HeadAtlas:
    """The head atlas averaged over the project's corpus, once per model (and by word)."""
    return corpus_head_atlas(get_model(model_name), by_word=by_word)


def warm(model_name: str) -> None:
    """At server start: the head atlas over the corpus."""
    get_corpus_atlas(model_name)


@results_cache("encoder: head atlas", share=0.01)
def get_input_atlas(key: InputKey, by_word: bool = False) -> HeadAtlas:
    """The head atlas of the current input, from an analysis with every layer's attention.

    Kept (a few numbers per head), so a rerun of the tab needs neither the weights (75 MB at 512
    tokens, not kept when they exceed their cache's share) nor the atlas's float64 work again.
    """
    analysis = analysis_of(key, attentions=True, notices=False)   # shown with the steps
    # One layer at a time: head_atlas works in float64 on several (layers, heads, T, T) arrays
    # at once, ~0.6 GB at 512 tokens for all six layers together.
    weights = analysis.attention_weights()
    return stack_layers([atlas_of(weights[k:k + 1], analysis.encoding, by_word)
                         for k in range(weights.shape[0])])


def atlas_of(attentions: np.ndarray, encoding: Encoding, by_word: bool) -> HeadAtlas:
    """The atlas of (layers, heads, T, T) attentions, by token or by word (core.words)."""
    if not by_word:
        return head_atlas(attentions, encoding.special_tokens_mask, encoding.attention_mask)
    words = words_of_encoding(encoding)
    return head_atlas(attention_by_word(attentions, words), *word_masks(words))


def pooler_of(key: InputKey, analysis: Analysis) -> PoolerSteps:
    """The pooler taken apart (one dense layer on one vector: too cheap to cache)."""
    return pooler_steps(get_model(key.model), analysis)
