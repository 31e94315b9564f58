"""Encoder's data: one layer's steps per input, the corpus head atlas per model, the pooler.

Keys are plain strings, ints and bools (never tensors); results hold numbers only.
"""

from __future__ import annotations

import streamlit as st

from components.analysis_view import analysis_of, or_stop
from components.cache import get_analysis, get_model, shared_results
from components.inputs import SharedInputs
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

STEPS_CACHE_ENTRIES = 24  # one layer of a 512-token input is ~30 MB for bert-base; most are tiny


@shared_results(maxsize=STEPS_CACHE_ENTRIES)
def get_steps(
    model_name: str,
    text_a: str,
    text_b: str | None,
    max_length: int | None,
    truncation: bool,
    padding: bool,
    layer: int,
) -> EncoderSteps:
    """Every step of encoder layer ``layer`` for the input, tokenised as every page tokenises it.

    The layer's input and output come from the input's cached analysis, the one every page
    shares: taking a layer apart costs no second forward pass.
    """
    analysis = get_analysis(model_name, text_a, text_b, max_length, truncation, padding)
    return encoder_steps_from(get_model(model_name), analysis, layer)


def steps_of(inputs: SharedInputs, layer: int) -> EncoderSteps:
    return or_stop(get_steps, inputs.model, inputs.text_a, inputs.text_b, inputs.max_length,
                   inputs.truncation, inputs.padding, layer)


@st.cache_resource(max_entries=2, show_spinner=False)
def corpus_atlas(model_name: str) -> HeadAtlas:
    """The head atlas averaged over the project's corpus, once per model."""
    return corpus_head_atlas(get_model(model_name))


def warm(model_name: str) -> None:
    """At server start: the head atlas over the corpus."""
    corpus_atlas(model_name)


def input_atlas(inputs: SharedInputs) -> HeadAtlas:
    """The head atlas of the current input, from an analysis with every layer's attention."""
    analysis = analysis_of(inputs, attentions=True, notices=False)   # shown with the steps
    enc = analysis.encoding
    return head_atlas(analysis.attentions, enc.special_tokens_mask, enc.attention_mask)


def pooler_of(inputs: SharedInputs, analysis: Analysis) -> PoolerSteps:
    """The pooler taken apart (one dense layer on one vector: too cheap to cache)."""
    return pooler_steps(get_model(inputs.model), analysis)
