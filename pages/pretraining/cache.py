"""Pretraining's data: the MLM corruption, the two pretraining heads and the fine-tuning heads,
each cached on plain strings and numbers. Results hold numbers and tokens, never translated text.
Every function raises core's ExplorerError (not cached) for input core cannot take."""

from __future__ import annotations

import random
import zlib

import streamlit as st

from components.cache import get_encoding, get_model
from core.corpus import CORPUS
from core.pretraining import (
    FinetuningPattern,
    Masking,
    MaskTrace,
    NextSentence,
    Prediction,
    fill_mask,
    finetuning_patterns,
    has_mlm_head,
    has_nsp_head,
    mask_by_layer,
    mask_tokens,
    next_sentence,
)

ENTRIES = 32


def heads(model: str) -> tuple[bool, bool]:
    """(has the MLM head, has the NSP head) of the model in use."""
    bundle = get_model(model)
    return has_mlm_head(bundle), has_nsp_head(bundle)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def masking(model: str, a: str, b: str | None, seed: int, probability: float,
            whole_word: bool) -> Masking:
    return mask_tokens(get_model(model), a, b, seed=seed, probability=probability,
                       whole_word=whole_word)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def predictions(model: str, text: str, top_k: int) -> list[list[Prediction]]:
    return fill_mask(get_model(model), text, top_k=top_k)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def traces(model: str, text: str) -> list[MaskTrace]:
    return mask_by_layer(get_model(model), text)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def is_next(model: str, a: str, b: str) -> NextSentence:
    return next_sentence(get_model(model), a, b)


def random_sentence(a: str, b: str) -> str:
    """A corpus sentence that is not B, chosen by a generator seeded from the pair: the same
    pair always gets the same stand-in, so the page is stable."""
    choices = [s for s in CORPUS if s.strip() != b.strip()]
    return random.Random(zlib.crc32(f"{a}\x00{b}".encode())).choice(choices)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def patterns(model: str, n_classes: int) -> list[FinetuningPattern]:
    return finetuning_patterns(get_model(model).config, n_classes)


def tokens(model: str, a: str, b: str | None) -> list[str]:
    """The tokens of A (and B), as the tokenizer gives them."""
    return list(get_encoding(model, a, b).tokens)


def maskable(model: str, a: str) -> list[tuple[int, str]]:
    """(position, token) of sentence A's tokens that are not special."""
    enc = get_encoding(model, a, None)
    return [(i, t) for i, (t, s) in enumerate(zip(enc.tokens, enc.special_tokens_mask,
                                                   strict=True)) if not s]


def masked_text(model: str, a: str, position: int) -> str:
    """Sentence A with the token at ``position`` replaced by [MASK], written back as text."""
    bundle = get_model(model)
    enc = get_encoding(model, a, None)
    pieces = [bundle.tokenizer.mask_token if i == position else t
              for i, (t, s) in enumerate(zip(enc.tokens, enc.special_tokens_mask, strict=True))
              if not s]
    return bundle.tokenizer.convert_tokens_to_string(pieces)
