"""Pretraining's data: the MLM corruption, the two pretraining heads and the fine-tuning heads,
each per-input result keyed on the InputKey first (so the masking honours the shared tokenizer
options, as every page does). Results hold numbers and tokens, never translated text.
Every function raises core's ExplorerError (not cached) for input core cannot take."""

from __future__ import annotations

import random
import zlib

import streamlit as st

from components.cache import MODEL_CACHE_ENTRIES, get_encoding, get_model, results_cache
from components.input_key import InputKey
from core.corpus import CORPUS
from core.pretraining import (
    FinetuningPattern,
    Masking,
    MaskLens,
    NextSentence,
    Prediction,
    fill_mask,
    finetuning_patterns,
    has_mlm_head,
    has_nsp_head,
    mask_lens,
    mask_tokens,
    next_sentence,
)

SHARE = 0.02   # of the results budget, for each cache: token lists and small probability tables
LENS_K = 5     # guesses per layer the [MASK] by layer table shows


def heads(model_name: str) -> tuple[bool, bool]:
    """(has the MLM head, has the NSP head) of the model in use."""
    bundle = get_model(model_name)
    return has_mlm_head(bundle), has_nsp_head(bundle)


@results_cache("pretraining: masking", SHARE)
def get_masking(key: InputKey, seed: int, probability: float, whole_word: bool) -> Masking:
    """The MLM corruption of the input, tokenised with the shared options as on every page."""
    return mask_tokens(get_model(key.model), key.text_a, key.text_b, seed=seed,
                       probability=probability, whole_word=whole_word,
                       max_length=key.max_length, truncation=key.truncation,
                       padding=key.padding)


@results_cache("pretraining: predictions", SHARE)
def get_predictions(key: InputKey, top_k: int) -> list[list[Prediction]]:
    """The MLM head's guesses at each [MASK] of ``key.text_a``."""
    return fill_mask(get_model(key.model), key.text_a, top_k=top_k)


@results_cache("pretraining: [MASK] by layer", SHARE)
def get_lens(key: InputKey, transform: bool) -> MaskLens:
    """The MLM head (``transform``) or its decoder alone read at every layer, at each [MASK] of
    ``key.text_a``."""
    return mask_lens(get_model(key.model), key.text_a, k=LENS_K, transform=transform)


@results_cache("pretraining: next sentence", SHARE)
def get_is_next(key: InputKey) -> NextSentence:
    return next_sentence(get_model(key.model), key.text_a, key.text_b)


def random_sentence(a: str, b: str) -> str:
    """A corpus sentence that is not B, chosen by a generator seeded from the pair: the same
    pair always gets the same stand-in, so the page is stable."""
    choices = [s for s in CORPUS if s.strip() != b.strip()]
    return random.Random(zlib.crc32(f"{a}\x00{b}".encode())).choice(choices)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES * 4, show_spinner=False)
def get_patterns(model_name: str, n_classes: int) -> list[FinetuningPattern]:
    """The four fine-tuning heads for this model's config (per model, not per input)."""
    return finetuning_patterns(get_model(model_name).config, n_classes)


def tokens(key: InputKey) -> list[str]:
    """The tokens of A (and B), as every page tokenises them."""
    return list(get_encoding(key).tokens)


def maskable(key: InputKey) -> list[tuple[int, str]]:
    """(position, token) of sentence A's tokens that are not special."""
    enc = get_encoding(key.with_texts(key.text_a))
    return [(i, t) for i, (t, s) in enumerate(zip(enc.tokens, enc.special_tokens_mask,
                                                   strict=True)) if not s]


def masked_text(key: InputKey, position: int) -> str:
    """Sentence A with the token at ``position`` replaced by [MASK], written back as text."""
    bundle = get_model(key.model)
    enc = get_encoding(key.with_texts(key.text_a))
    pieces = [bundle.tokenizer.mask_token if i == position else t
              for i, (t, s) in enumerate(zip(enc.tokens, enc.special_tokens_mask, strict=True))
              if not s]
    return bundle.tokenizer.convert_tokens_to_string(pieces)
