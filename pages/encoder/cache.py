"""Encoder's data: one layer's steps per input, the corpus head atlas per model, the pooler.

Per-input results are keyed on the InputKey first (never tensors); results hold numbers only.
"""

from __future__ import annotations

import streamlit as st

from components.analysis_view import analysis_of
from components.cache import get_analysis, get_model, results_cache
from components.input_key import InputKey
from core import Analysis
from core.encoder import (
    EncoderSteps,
    HeadAtlas,
    PoolerSteps,
    corpus_head_atlas,
    encoder_steps_from,
    head_atlas,
    pooler_steps,
)


@results_cache("encoder: layer steps", share=0.25)
def get_steps(key: InputKey, layer: int) -> EncoderSteps:
    """Every step of encoder layer ``layer`` for the input, tokenised as every page tokenises it.

    The layer's input and output come from the input's cached analysis, the one every page
    shares: taking a layer apart costs no second forward pass. Raises InputError (not cached).
    """
    return encoder_steps_from(get_model(key.model), get_analysis(key), layer)


@st.cache_resource(max_entries=2, show_spinner=False)
def corpus_atlas(model_name: str) -> HeadAtlas:
    """The head atlas averaged over the project's corpus, once per model."""
    return corpus_head_atlas(get_model(model_name))


def warm(model_name: str) -> None:
    """At server start: the head atlas over the corpus."""
    corpus_atlas(model_name)


def input_atlas(key: InputKey) -> HeadAtlas:
    """The head atlas of the current input, from an analysis with every layer's attention."""
    analysis = analysis_of(key, attentions=True, notices=False)   # shown with the steps
    enc = analysis.encoding
    return head_atlas(analysis.attentions, enc.special_tokens_mask, enc.attention_mask)


def pooler_of(key: InputKey, analysis: Analysis) -> PoolerSteps:
    """The pooler taken apart (one dense layer on one vector: too cheap to cache)."""
    return pooler_steps(get_model(key.model), analysis)
